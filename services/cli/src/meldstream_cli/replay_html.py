"""`meldstream replay --html FILE`: one self-contained page (no network, no files beside it) that steps
forward and back through a game. The page carries the JSON export itself, so the web replay viewer
and any other tool read the same document; the summary and the event list are rendered in the page
as text as well, so it reads without scripts.

Player ids are text from anyone. The page's script builds the table from text nodes only, each name
in a <bdi> without bidi controls (as the web app's names.js does); the lines rendered here escape and
isolate names the same way; the embedded export cannot end its script element; and the page's
Content-Security-Policy runs its own script alone (by its hash), so markup in a name could not run.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from typing import Any, Final

from rummy_service.limits import DISPLAY_NAME
from rummy_service.text import clipped

from meldstream_cli.replay_text import event_line, for_people, narrator, summary_lines

# Bidi embeddings, overrides and isolates: an unpaired closer would end a name's isolation early.
_BIDI_CONTROLS: Final = re.compile("[\u202a-\u202e\u2066-\u2069]")

_SCRIPT: Final = """
const DISPLAY_NAME = @DISPLAY_NAME@;
const BIDI_CONTROLS = /[\\u202A-\\u202E\\u2066-\\u2069]/g;
const $ = (id) => document.getElementById(id);
function el(tag, text) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  return node;
}
function nameEl(name) {
  const chars = [...String(name ?? "?").replace(BIDI_CONTROLS, "")];
  const more = chars.length - DISPLAY_NAME;
  const cut = `${chars.slice(0, DISPLAY_NAME).join("")}…(+${more} characters)`;
  const node = el("bdi", more > 0 ? cut : chars.join(""));
  node.className = "name";
  return node;
}
const doc = JSON.parse($("export").textContent);
const events = doc.events;
let at = 0;
function show(index) {
  at = Math.max(0, Math.min(events.length - 1, index));
  const state = events[at].state;
  const players = doc.summary.players.map((id, i) => (doc.summary.names && doc.summary.names[i]) || id);
  $("position").textContent = `event ${at + 1} of ${events.length}`;
  $("event").textContent = document.querySelectorAll("#list li")[at].textContent;
  const table = el("table");
  state.hand_sizes.forEach((size, seat) => {
    const hand = state.hands[seat];
    const who = el("td", `${seat} `);
    who.append(nameEl(players[seat]));
    if (state.away[seat]) who.append(" ", el("b", "AWAY"));
    const cards = el("td");
    cards.append(hand === null ? el("i", "hidden") : hand.join(" "));
    const row = el("tr");
    row.append(el("td", seat === state.turn ? "\\u25B6" : ""), who, el("td", `${size}`), cards);
    table.append(row);
  });
  const melds = el("ul");
  state.melds.forEach((m, i) =>
    melds.append(el("li", `meld ${i + 1} (seat ${m.owner}): ${m.cards.join(" ")}`)));
  const pile = state.discard.slice(-8).join(" ") || "-";
  const line = el("p", `discard (top last): ${pile} · stock: ${state.stock_size} · deal ${state.deal}` +
    ` · phase ${state.phase} · totals ${state.totals.join(", ")}`);
  $("table").replaceChildren(table, melds, line);
  document.querySelectorAll("#list li").forEach((li, i) => li.classList.toggle("at", i === at));
}
$("first").onclick = () => show(0);
$("back").onclick = () => show(at - 1);
$("forward").onclick = () => show(at + 1);
$("last").onclick = () => show(events.length - 1);
document.querySelectorAll("#list li").forEach((li, i) => { li.onclick = () => show(i); });
document.addEventListener("keydown", (e) => {
  if (e.key === "ArrowLeft") show(at - 1);
  if (e.key === "ArrowRight") show(at + 1);
});
if (events.length) show(0);
""".replace("@DISPLAY_NAME@", str(DISPLAY_NAME))

_STYLE: Final = """
body { font-family: system-ui, sans-serif; margin: 1.5em; }
pre, #event, td { font-family: ui-monospace, monospace; }
pre { white-space: pre-wrap; }
pre, #event, #list li, .name { overflow-wrap: anywhere; }
#list { max-height: 20em; overflow: auto; font-family: ui-monospace, monospace; font-size: 90%; }
#list li { cursor: pointer; } #list li.at { background: #fe8; }
td { padding: 0 .6em; }
"""


def _hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


POLICY: Final = "; ".join(
    (
        "default-src 'none'",
        f"script-src {_hash(_SCRIPT)}",
        f"style-src {_hash(_STYLE)}",
        "base-uri 'none'",
        "form-action 'none'",
    )
)
"""The page's Content-Security-Policy (a <meta>: a file has no headers): its own script and style only."""


def _isolated(name: str) -> str:
    """A name in the page's text: without bidi controls, cut, isolated by FSI … PDI."""
    return f"\u2068{clipped(_BIDI_CONTROLS.sub('', name), DISPLAY_NAME)}\u2069"


def _data(doc: dict[str, Any]) -> str:
    """The export as the script element's text: JSON with no `<`, `>` or `&` (escaped as in a JSON
    string), so nothing in it can end the element or open a comment that swallows its end."""
    text = json.dumps(doc)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render(doc: dict[str, Any]) -> str:
    title = f"meldstream replay: {doc['game_id']}"
    shown = for_people(doc, _isolated)
    summary = html.escape("\n".join(summary_lines(shown)))
    words = narrator(shown)
    items = "\n".join(f"<li>{html.escape(event_line(words, entry))}</li>" for entry in shown["events"])
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{POLICY}">
<title>{html.escape(title)}</title><style>{_STYLE}</style></head>
<body>
<h1>{html.escape(title)}</h1>
<h2>Summary</h2>
<pre id="summary">{summary}</pre>
<h2>Step through</h2>
<p><button id="first">&#x23EE; first</button> <button id="back">&#x25C0; back</button>
<button id="forward">forward &#x25B6;</button> <button id="last">last &#x23ED;</button>
<span id="position"></span> (arrow keys work too)</p>
<div id="event"></div>
<div id="table"></div>
<h2>Events</h2>
<ol id="list">
{items}
</ol>
<script type="application/json" id="export">{_data(doc)}</script>
<script>{_SCRIPT}</script>
</body></html>
"""
