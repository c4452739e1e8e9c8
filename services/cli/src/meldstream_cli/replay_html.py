"""`meldstream replay --html FILE`: one self-contained page (no network, no files beside it) that steps
forward and back through a game. The page carries the JSON export itself, so the web replay viewer
and any other tool read the same document; the summary and the event list are rendered in the page
as text as well, so it reads without scripts."""

from __future__ import annotations

import html
import json
from typing import Any

from meldstream_cli.replay_text import event_line, summary_lines

_SCRIPT = """
const doc = JSON.parse(document.getElementById("export").textContent);
const events = doc.events;
let at = 0;
const $ = (id) => document.getElementById(id);
function show(index) {
  at = Math.max(0, Math.min(events.length - 1, index));
  const entry = events[at];
  const state = entry.state;
  const players = doc.summary.players;
  $("position").textContent = `event ${at + 1} of ${events.length}`;
  $("event").textContent = document.querySelectorAll("#list li")[at].textContent;
  const rows = state.hand_sizes.map((size, seat) => {
    const hand = state.hands[seat];
    const turn = seat === state.turn ? "&#9654;" : "";
    const away = state.away[seat] ? " <b>AWAY</b>" : "";
    const cards = hand === null ? "<i>hidden</i>" : hand.join(" ");
    const who = `${seat} ${players[seat] ?? "?"}${away}`;
    return `<tr><td>${turn}</td><td>${who}</td><td>${size}</td><td>${cards}</td></tr>`;
  });
  const melds = state.melds.map((m, i) => `<li>meld ${i} (seat ${m.owner}): ${m.cards.join(" ")}</li>`);
  $("table").innerHTML = `<table>${rows.join("")}</table><ul>${melds.join("")}</ul>` +
    `<p>discard (top last): ${state.discard.slice(-8).join(" ") || "-"} &middot; stock: ${state.stock_size}` +
    ` &middot; deal ${state.deal} &middot; phase ${state.phase}` +
    ` &middot; totals ${state.totals.join(", ")}</p>`;
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
"""

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; }
pre, #event, td { font-family: ui-monospace, monospace; }
#list { max-height: 20em; overflow: auto; font-family: ui-monospace, monospace; font-size: 90%; }
#list li { cursor: pointer; } #list li.at { background: #fe8; }
td { padding: 0 .6em; }
"""


def render(doc: dict[str, Any]) -> str:
    title = f"meldstream replay: {doc['game_id']}"
    summary = html.escape("\n".join(summary_lines(doc)))
    items = "\n".join(f"<li>{html.escape(event_line(doc, entry))}</li>" for entry in doc["events"])
    data = json.dumps(doc).replace("</", "<\\/")  # the JSON cannot close its script element
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title><style>{_STYLE}</style></head>
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
<script type="application/json" id="export">{data}</script>
<script>{_SCRIPT}</script>
</body></html>
"""
