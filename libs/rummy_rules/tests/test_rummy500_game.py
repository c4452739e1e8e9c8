"""Rummy 500 scenarios through `decide`: deep picks with their use, credit, deal scores, the game end."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from rummy_rules.cards import JOKER, Card, parse_card, parse_cards
from rummy_rules.commands import (
    Command,
    Discard,
    DrawFromStock,
    LayMelds,
    LayOff,
    PickFromPile,
    TakeDiscard,
)
from rummy_rules.errors import RuleViolation
from rummy_rules.events import CardDrawn, DealEnded, DealStarted, GameEnded, MeldsLaid
from rummy_rules.game import apply, decide, legal_actions, replay, start
from rummy_rules.melds import make_meld
from rummy_rules.state import GameState, Phase
from rummy_rules.variants import Rules
from rummy_rules.views import observe

OTHERS = "KS QS 2D"
SEED = bytes(16)


def position(
    hand: str,
    *,
    rules: Rules | None = None,
    phase: Phase = Phase.DRAW,
    stock: str = "2C 3C 4C",
    discard: str = "4C 9H KD 2S",
    table: Sequence[tuple[str, int]] = (),
    totals: Sequence[int] = (0, 0, 0),
    **options: int | bool | str,
) -> GameState:
    """Seat 0 to move with `hand`, seats 1 and 2 holding `OTHERS`; stock top first, pile bottom first."""
    state = replay([start("rummy500", 3, SEED, **options)])
    rules = state.rules
    melds = tuple(make_meld(parse_cards(cards), rules) for cards, _ in table)
    return state._replace(
        dealer=2,
        hands=(parse_cards(hand), parse_cards(OTHERS), parse_cards(OTHERS)),
        stock=tuple(reversed(parse_cards(stock))),
        discard=parse_cards(discard),
        melds=melds,
        owners=tuple(owner for _, owner in table),
        credits=tuple((owner,) * len(meld.cards) for meld, (_, owner) in zip(melds, table, strict=True)),
        turn=0,
        phase=phase,
        totals=tuple(totals),
    )


def refused(state: GameState, command: Command) -> str:
    with pytest.raises(RuleViolation) as caught:
        decide(state, command, seed=SEED)
    assert caught.value.rule and caught.value.message
    return caught.value.code


def test_deep_pick_takes_everything_above_and_melds_the_selected_card() -> None:
    state = position("9C 9D 3H")
    meld = LayMelds(0, (parse_cards("9H 9C 9D"),))
    state, events = apply(state, PickFromPile(0, 1, meld), seed=SEED)  # src ¶17, D21
    assert events[:3] == [
        CardDrawn(0, parse_card("2S"), True),
        CardDrawn(0, parse_card("KD"), True),
        CardDrawn(0, parse_card("9H"), True),
    ]
    assert isinstance(events[3], MeldsLaid)
    assert state.discard == parse_cards("4C")
    assert sorted(state.hands[0]) == sorted(parse_cards("3H KD 2S"))
    assert refused(state, Discard(0, parse_card("9H"))) == "card_not_in_hand"
    state, _ = apply(state, Discard(0, parse_card("KD")), seed=SEED)  # D8: cards above may be discarded


def test_pick_refused_without_its_use() -> None:
    state = position("9C 9D 3H")
    assert refused(state, PickFromPile(0, 1)) == "pick_must_be_used"  # §3.6.2
    assert refused(state, PickFromPile(0, 3)) == "pick_must_be_used"  # D7: the top card too
    assert refused(state, TakeDiscard(0)) == "pick_must_be_used"
    other = LayMelds(0, (parse_cards("KD 9C 9D"),))
    assert refused(state, PickFromPile(0, 1, other)) == "pick_must_be_used"  # 9H is not in it
    bad = LayMelds(0, (parse_cards("9H 9C 3H"),))
    assert refused(state, PickFromPile(0, 1, bad)) == "not_a_meld"
    assert refused(state, PickFromPile(0, 9, other)) == "no_such_pile_card"


def test_option_top_discard_free_takes_the_top_card_alone() -> None:
    state = position("9C 9D 3H", top_discard_free=True)
    _, events = apply(state, TakeDiscard(0), seed=SEED)
    assert events == [CardDrawn(0, parse_card("2S"), True)]
    assert refused(state, PickFromPile(0, 2)) == "pick_must_be_used"


def test_pick_with_a_layoff_on_another_players_meld_is_credited_to_the_picker() -> None:
    state = position("3H 5C 6C", table=[("10D JD QD", 1)])
    state, _ = apply(state, PickFromPile(0, 2, LayOff(0, 0, parse_cards("KD"))), seed=SEED)  # D20
    assert state.melds[0].cards == parse_cards("10D JD QD KD")
    assert state.credits[0] == (1, 1, 1, 0)  # D12: per card
    legal = legal_actions(state, 0)
    assert LayOff(0, 0, parse_cards("AH")) not in legal


def test_deal_score_is_credited_value_minus_hand_and_the_deal_rotates() -> None:
    state = position("AS 2S 3S 4S 9C", phase=Phase.PLAY, table=[("5S 6S 7S", 1)])
    state, _ = apply(state, LayMelds(0, (parse_cards("AS 2S 3S"),)), seed=SEED)
    state, _ = apply(state, LayOff(0, 1, parse_cards("4S")), seed=SEED)
    state, events = apply(state, Discard(0, parse_card("9C")), seed=SEED)  # D9: out by the last discard
    ended = next(event for event in events if isinstance(event, DealEnded))
    # seat 0: 1 + 2 + 3 melded, 4 laid off; seat 1: 5 + 6 + 7 minus K Q 2 in hand (22).
    assert ended.penalties == (10, -4, -22)
    assert isinstance(events[-1], DealStarted) and events[-1].dealer == 0  # D15
    assert state.totals == (10, -4, -22)


def test_empty_stock_ends_the_deal_when_the_player_does_not_pick() -> None:
    state = position("AS 2S 3S", stock="", table=[("5S 6S 7S", 1)])
    assert DrawFromStock(0) in legal_actions(state, 0)
    _, events = apply(state, DrawFromStock(0), seed=SEED)  # D10
    assert events[0] == DealEnded(None, False, (-20, -4, -22))  # AS 2S 3S in hand: 15 + 2 + 3


def test_reaching_500_ends_the_game_with_settlement() -> None:
    state = position("AS 2S 3S 9C", phase=Phase.PLAY, totals=(495, 480, -20))
    state, _ = apply(state, LayMelds(0, (parse_cards("AS 2S 3S"),)), seed=SEED)
    state, events = apply(state, Discard(0, parse_card("9C")), seed=SEED)
    assert events[-1] == GameEnded((0,), (501, 458, -42), (586, -43, -543), SEED)  # src ¶11, D14
    assert observe(state, 1).seed == SEED


def test_shared_top_score_plays_another_deal() -> None:
    state = position("AS 2S 3S 9C", phase=Phase.PLAY, totals=(494, 522, 0))
    state, _ = apply(state, LayMelds(0, (parse_cards("AS 2S 3S"),)), seed=SEED)
    _, events = apply(state, Discard(0, parse_card("9C")), seed=SEED)  # D13: 500 and 500 tie at the top
    assert isinstance(events[-1], DealStarted)


def test_whole_pile_is_visible_to_everyone() -> None:
    state = position("9C 9D 3H")
    assert observe(state, 1).discard_pile == parse_cards("4C 9H KD 2S")  # src ¶14
    assert observe(replay([start("kalooki", 3, bytes(16))]), 1).discard_pile == ()


def test_a_joker_in_the_pile_can_be_picked_with_a_meld_that_uses_it() -> None:
    state = position("5H 6H 9C 9D KC", discard="4C JK", jokers=2)  # option jokers (§5)
    actions = legal_actions(state, 0)
    joker_picks = [
        action
        for action in actions
        if isinstance(action, PickFromPile) and action.index == 1 and action.then is not None
    ]
    assert joker_picks and all(JOKER in cards for pick in joker_picks for cards in _use_cards(pick))
    for action in actions:
        decide(state, action, seed=SEED)  # every one accepted


def _use_cards(pick: PickFromPile) -> list[tuple[Card, ...]]:
    then = pick.then
    return [then.cards] if isinstance(then, LayOff) else list(then.melds) if then is not None else []
