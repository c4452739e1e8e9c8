"""Every kind of the proto's Action oneof reads in every language, from the one table
(`action_labels.json`): each message it names is in each catalogue with exactly the placeholders the
table fills, the table names only kinds that exist, and a kind without a row (a new action) still reads
as its catalogue message. The page renders the same table the same way: services/web/tests/
test_action_labels_js.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from rummy.game.v1 import events_pb2 as ev
from rummy.game.v1 import game_service_pb2 as gs
from rummy_contracts import action_labels
from rummy_contracts.catalogue import LANGUAGES, PLACEHOLDER, raw, words

SEVEN_HEARTS = ev.Card(rank=7, suit=ev.SUIT_HEARTS)
RUN = [ev.Card(rank=r, suit=ev.SUIT_CLUBS) for r in (3, 4, 5)]


def _messages(form: Any, shared: dict[str, Any]) -> Iterator[tuple[str, frozenset[str], bool]]:
    """Each message a form names: its id, the placeholders it fills, whether it is a plural."""
    if not isinstance(form, dict):
        return
    if isinstance(form.get("use"), str):
        yield from _messages(shared[form["use"]], shared)
        return
    if "id" in form:
        args = form.get("args", {})
        if isinstance(args.get("use"), str):
            args = shared[args["use"]]
        yield form["id"], frozenset(args), False
        for value in args.values():
            yield from _messages(value, shared)
    if "plural" in form:
        yield form["plural"], frozenset({"count"}), True
    for chosen in form.get("ids", {}).values():
        yield chosen, frozenset(), False
    if "join" in form:
        yield "list.separator", frozenset(), False
    for part in [*form.get("first", []), *form.get("join", [])]:
        yield from _messages(part, shared)


def _every_message() -> list[tuple[str, frozenset[str], bool]]:
    table = action_labels.table()
    return [
        found for kind in action_labels.KINDS for found in _messages(action_labels.row(kind), table["shared"])
    ]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_action_kind_has_a_label_in_every_language(lang: str) -> None:
    catalogue = raw(lang)
    named = _every_message()
    assert {key for key, _, _ in named} >= {action_labels.row(kind)["id"] for kind in action_labels.KINDS}
    for key, placeholders, plural in named:
        assert key in catalogue, (lang, key)
        message = catalogue[key]
        texts = list(message.values()) if isinstance(message, dict) else [message]
        assert isinstance(message, dict) == plural, (lang, key)
        for text in texts:
            assert set(PLACEHOLDER.findall(text)) == placeholders, (lang, key, text)


def test_the_table_names_only_kinds_that_exist() -> None:
    table = action_labels.table()
    assert set(table["labels"]) <= set(action_labels.KINDS)
    assert set(table["order"]) <= set(action_labels.KINDS)
    assert len(table["order"]) == len(set(table["order"]))


def test_a_kind_without_a_row_reads_as_its_catalogue_message_and_is_listed_last() -> None:
    assert "draw_from_stock" not in action_labels.table()["labels"]  # the default row serves it
    assert action_labels.row("resign") == {"id": "move.resign", "args": {}}
    assert action_labels.order("resign") == len(action_labels.table()["order"])
    draw, buy = gs.Action(draw_from_stock=gs.DrawFromStock()), gs.Action(buy_discard=gs.BuyDiscard())
    assert action_labels.menu_order([draw, buy]) == [buy, draw]


def _view() -> gs.PlayerView:
    pile = [ev.Card(rank=2, suit=ev.SUIT_SPADES), SEVEN_HEARTS, ev.Card(rank=12, suit=ev.SUIT_DIAMONDS)]
    return gs.PlayerView(discard_top=pile[-1], discard_pile=pile, offer=SEVEN_HEARTS)


def test_labels_read_as_the_table_says() -> None:
    en = action_labels.plain(words("en"))
    lay_off = gs.LayOff(meld=1, cards=[ev.Card(rank=6, suit=ev.SUIT_CLUBS)], at=gs.RUN_END_HIGH)
    cases = [
        (gs.Action(draw_from_stock=gs.DrawFromStock()), "Draw from stock"),
        (gs.Action(take_discard=gs.TakeDiscard()), "Take discard Q♦"),
        (gs.Action(discard=gs.Discard(card=SEVEN_HEARTS)), "Discard 7♥"),
        (gs.Action(lay_melds=gs.LayMelds(melds=[gs.MeldCards(cards=RUN)] * 2)), "Meld 3♣ 4♣ 5♣ | 3♣ 4♣ 5♣"),
        (gs.Action(lay_off=lay_off), "Lay off 6♣ on meld 2 (high end)"),
        (
            gs.Action(go_out=gs.GoOut(layoffs=[lay_off], discard=SEVEN_HEARTS)),
            "Go out: lay off 6♣ on meld 2 (high end), discard 7♥",
        ),
        (
            gs.Action(pick_from_pile=gs.PickFromPile(index=0, lay_off=lay_off)),
            "Pick 2♠ and the 2 cards above it from the pile, then lay off 6♣ on meld 2 (high end)",
        ),
        (gs.Action(pick_from_pile=gs.PickFromPile(index=2)), "Pick Q♦ from the pile"),
        (gs.Action(swap_joker=gs.SwapJoker(meld=0, cards=[SEVEN_HEARTS])), "Swap 7♥ for the joker in meld 1"),
        (gs.Action(buy_discard=gs.BuyDiscard()), "Buy 7♥ (with a penalty card from the stock)"),
        (gs.Action(pass_buy=gs.PassBuy()), "Pass: don't buy 7♥"),
    ]
    assert {action.WhichOneof("kind") for action, _ in cases} == set(action_labels.KINDS)
    for action, text in cases:
        assert action_labels.label(action, _view(), en) == text
    assert action_labels.label(gs.Action(), _view(), en) == ""
