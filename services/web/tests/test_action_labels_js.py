"""The page's labels.js and the terminal's rummy_contracts.action_labels render the same label from the
one table, for a sample of every kind of action in every language: node runs the page's module on the
JSON the gateway sends (`jsonpb.to_json`), beside the Python on the protobuf messages."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from meldstream_web.jsonpb import to_json
from rummy.game.v1 import events_pb2 as ev
from rummy.game.v1 import game_service_pb2 as gs
from rummy_contracts import action_labels
from rummy_contracts.catalogue import LANGUAGES, raw, words

LABELS_JS = Path(__file__).resolve().parents[1] / "src" / "meldstream_web" / "static" / "labels.js"

# The page's words as i18n.js makes them (fill, plural forms by Intl.PluralRules) and its cards' text
# (cards.js `cardText`), around labels.js; one label per line of input.
NODE = """
import { label } from %s;
import { readFileSync } from "node:fs";
const input = JSON.parse(readFileSync(0, "utf8"));
const SUITS = {
  SUIT_CLUBS: "\\u2663", SUIT_DIAMONDS: "\\u2666", SUIT_HEARTS: "\\u2665", SUIT_SPADES: "\\u2660",
};
const RANKS = ["JK", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
const cardText = (card) => (!card || !card.rank ? "JK" : RANKS[card.rank] + (SUITS[card.suit] || "?"));
const fill = (template, params) => template.replace(/\\{([a-z_]+)\\}/g, (_, name) => `${params[name]}`);
const out = {};
for (const [lang, messages] of Object.entries(input.catalogues)) {
  const rules = new Intl.PluralRules(lang);
  const voice = {
    say: (id, params) => (typeof messages[id] === "string" ? fill(messages[id], params) : id),
    count: (id, count, params) =>
      fill(messages[id][rules.select(count)] || messages[id].other, { ...params, count }),
    card: cardText,
  };
  out[lang] = input.cases.map(({ action, view }) => label(input.table, action, view, voice));
}
process.stdout.write(JSON.stringify(out));
"""

CARD = ev.Card(rank=7, suit=ev.SUIT_HEARTS)
TEN = ev.Card(rank=10, suit=ev.SUIT_SPADES)
RUN = gs.MeldCards(cards=[ev.Card(rank=r, suit=ev.SUIT_CLUBS) for r in (3, 4, 5)])
SET = gs.MeldCards(cards=[ev.Card(rank=9, suit=s) for s in (ev.SUIT_CLUBS, ev.SUIT_HEARTS, ev.SUIT_SPADES)])
LOW = gs.LayOff(meld=2, cards=[ev.Card(rank=2, suit=ev.SUIT_CLUBS)], at=gs.RUN_END_LOW)
PLAIN = gs.LayOff(meld=0, cards=[ev.Card(), TEN])


def _view(pile: int) -> gs.PlayerView:
    cards = [ev.Card(rank=1 + i % 13, suit=ev.SUIT_DIAMONDS) for i in range(pile)]
    return gs.PlayerView(discard_top=cards[-1] if cards else None, discard_pile=cards, offer=TEN)


SAMPLES: list[tuple[gs.Action, gs.PlayerView]] = [
    (gs.Action(draw_from_stock=gs.DrawFromStock()), _view(1)),
    (gs.Action(take_discard=gs.TakeDiscard()), _view(3)),
    (gs.Action(lay_melds=gs.LayMelds(melds=[RUN, SET])), _view(1)),
    (gs.Action(lay_off=LOW), _view(1)),
    (gs.Action(lay_off=PLAIN), _view(1)),
    (gs.Action(swap_joker=gs.SwapJoker(meld=1, cards=[CARD], lay_melds=gs.LayMelds(melds=[SET]))), _view(1)),
    (gs.Action(swap_joker=gs.SwapJoker(meld=0, cards=[CARD])), _view(1)),
    (gs.Action(discard=gs.Discard(card=CARD)), _view(1)),
    (gs.Action(go_out=gs.GoOut(melds=[RUN], layoffs=[LOW, PLAIN], discard=CARD)), _view(1)),
    (gs.Action(go_out=gs.GoOut(melds=[RUN, SET])), _view(1)),
    (gs.Action(pick_from_pile=gs.PickFromPile(index=0, lay_off=LOW)), _view(3)),
    (gs.Action(pick_from_pile=gs.PickFromPile(index=1, lay_melds=gs.LayMelds(melds=[RUN]))), _view(7)),
    (gs.Action(pick_from_pile=gs.PickFromPile(index=0)), _view(22)),
    (gs.Action(pick_from_pile=gs.PickFromPile(index=4)), _view(5)),
    (gs.Action(pick_from_pile=gs.PickFromPile(index=9)), _view(5)),  # outside the pile
    (gs.Action(buy_discard=gs.BuyDiscard()), _view(1)),
    (gs.Action(pass_buy=gs.PassBuy()), _view(1)),
]


def test_the_samples_hold_every_kind() -> None:
    assert {action.WhichOneof("kind") for action, _ in SAMPLES} == set(action_labels.KINDS)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_page_and_the_terminal_label_every_sample_alike_in_every_language() -> None:
    script = NODE % json.dumps(LABELS_JS.as_uri())
    given = {
        "table": action_labels.table(),
        "catalogues": {lang: raw(lang) for lang in LANGUAGES},
        "cases": [{"action": to_json(action), "view": to_json(view)} for action, view in SAMPLES],
    }
    ran = subprocess.run(
        ["node", "--input-type=module", "-e", script],
        input=json.dumps(given),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    page = json.loads(ran.stdout)
    for lang in LANGUAGES:
        voice = action_labels.plain(words(lang))
        terminal = [action_labels.label(action, view, voice) for action, view in SAMPLES]
        assert page[lang] == terminal, lang
        assert all(text and "{" not in text for text in terminal), lang
    assert len(set(page["ru"])) == len(SAMPLES)  # no two samples read alike: each shows its own parts
