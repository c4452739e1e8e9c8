"""Contract rummy scenarios through `decide`: buying, laying down, laying off, round 8, the match end."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from rummy_rules.bots import random_legal
from rummy_rules.cards import parse_card, parse_cards
from rummy_rules.commands import (
    BuyDiscard,
    Command,
    Discard,
    DrawFromStock,
    LayMelds,
    LayOff,
    PassBuy,
    SwapJoker,
    TakeDiscard,
)
from rummy_rules.contract_state import ContractState, buying
from rummy_rules.errors import RuleViolation
from rummy_rules.events import (
    BuyGranted,
    BuyOffered,
    BuyPassed,
    BuyRequested,
    BuyWaived,
    CardDrawn,
    DealEnded,
    DealStarted,
    GameEnded,
    StockReshuffled,
)
from rummy_rules.game import apply, buyers, decide, legal_actions, replay, start
from rummy_rules.melds import End, make_meld
from rummy_rules.serialize import from_dict, to_dict
from rummy_rules.simulate import simulate
from rummy_rules.state import GameState, Phase
from rummy_rules.variants import rules_for

CONTRACT = rules_for("contract", 4)
OTHERS = "KS QS 2D"
SEED = bytes(16)


def position(
    hand: str,
    *,
    deal: int = 3,
    phase: Phase = Phase.PLAY,
    turn: int = 0,
    stock: str = "2C 3C 4C 5C 6C",
    discard: str = "9D",
    table: Sequence[tuple[str, int]] = (),
    opened: Sequence[bool] = (False, False, False, False),
    buys: Sequence[int] = (0, 0, 0, 0),
    totals: Sequence[int] = (0, 0, 0, 0),
    **options: int,
) -> GameState:
    """Seat `turn` to move holding `hand`, the other seats `OTHERS`; `stock` is listed top first."""
    melds = tuple(make_meld(parse_cards(cards), CONTRACT) for cards, _ in table)
    state = replay([start("contract", 4, SEED, **options)])
    return state._replace(
        deal=deal,
        dealer=(turn - 1) % 4,
        hands=tuple(parse_cards(hand if seat == turn else OTHERS) for seat in range(4)),
        stock=tuple(reversed(parse_cards(stock))),
        discard=parse_cards(discard),
        melds=melds,
        owners=tuple(owner for _, owner in table),
        credits=tuple((owner,) * len(meld.cards) for meld, (_, owner) in zip(melds, table, strict=True)),
        opened=tuple(opened),
        turn=turn,
        phase=phase,
        totals=tuple(totals),
        variant_state=ContractState(tuple(buys)),
    )


def refused(state: GameState, command: Command) -> str:
    with pytest.raises(RuleViolation) as caught:
        decide(state, command, seed=SEED)
    assert caught.value.rule and caught.value.message
    return caught.value.code


def offered(**kwargs: object) -> GameState:
    """Seat 0 has just discarded 7H; seat 1 (forehand) may take it, seats 2 and 3 may buy it."""
    state = position("7H 8C 9C", **kwargs)  # type: ignore[arg-type]
    state, events = apply(state, Discard(0, parse_card("7H")), seed=SEED)
    assert events[-1] == BuyOffered(parse_card("7H"), 1, 0)  # §3.7.1
    return state


def test_discard_is_offered_and_the_first_request_is_granted_as_the_forehand_draws() -> None:
    state = offered()
    assert buyers(state) == (2, 3)
    assert legal_actions(state, 2) == (BuyDiscard(2), PassBuy(2))
    assert legal_actions(state, 0) == ()  # the discarder cannot buy (§3.7.3)
    assert decide(state, PassBuy(3), seed=SEED) == [BuyWaived(3, parse_card("7H"))]
    state, events = apply(state, BuyDiscard(2), seed=SEED)
    assert events == [BuyRequested(2, parse_card("7H"))]
    assert refused(state, BuyDiscard(3)) == "buy_already_requested"  # D12: first request wins
    state, events = apply(state, DrawFromStock(1), seed=SEED)
    # src ¶22: the buyer takes the discard and the top stock card; then the forehand draws (D12).
    assert events == [
        BuyGranted(2, parse_card("7H"), parse_card("2C"), 1, 0),
        CardDrawn(1, parse_card("3C"), False),
    ]
    assert sorted(state.hands[2]) == sorted(parse_cards(f"{OTHERS} 7H 2C"))
    assert buying(state).buys == (0, 0, 1, 0) and buying(state).offer is None and state.turn == 1  # D24


def test_a_pass_is_final_for_the_card_on_offer_and_only_for_it() -> None:
    state, events = apply(offered(), PassBuy(3), seed=SEED)
    assert events == [BuyWaived(3, parse_card("7H"))]  # D27: the pass is in the log
    assert buyers(state) == (2,) and legal_actions(state, 3) == ()
    assert refused(state, BuyDiscard(3)) == "buy_waived"
    assert refused(state, PassBuy(3)) == "buy_waived"
    assert legal_actions(state, 2) == (BuyDiscard(2), PassBuy(2))  # the others may still buy
    state, events = apply(state, DrawFromStock(1), seed=SEED)
    assert events[0] == BuyPassed(parse_card("7H"), False) and buying(state).waived == ()
    discard = state.hands[1][0]
    state, events = apply(state, Discard(1, discard), seed=SEED)
    assert events[-1] == BuyOffered(discard, 2, 1) and 3 in buyers(state)  # the next card is offered


def test_forehand_priority_beats_a_request() -> None:
    state = offered()
    state, _ = apply(state, BuyDiscard(3), seed=SEED)
    state, events = apply(state, TakeDiscard(1), seed=SEED)
    assert events == [BuyPassed(parse_card("7H"), True), CardDrawn(1, parse_card("7H"), True)]  # src ¶21
    assert buying(state).buys == (0, 0, 0, 0)


def test_offer_lapses_when_nobody_asks() -> None:
    state, events = apply(offered(), DrawFromStock(1), seed=SEED)
    assert events == [BuyPassed(parse_card("7H"), False), CardDrawn(1, parse_card("2C"), False)]
    assert refused(state, BuyDiscard(2)) == "nothing_to_buy"  # D23


def test_buyer_roles_and_limits() -> None:
    state = offered(buys=(0, 0, 4, 3))
    assert refused(state, BuyDiscard(1)) == "forehand_cannot_buy"
    assert refused(state, BuyDiscard(0)) == "discarder_cannot_buy"
    assert refused(state, BuyDiscard(2)) == "too_many_buys"  # D13: no fifth buy
    assert buyers(state) == (3,)
    state, _ = apply(state, BuyDiscard(3), seed=SEED)
    state, events = apply(state, DrawFromStock(1), seed=SEED)
    assert events[0] == BuyGranted(3, parse_card("7H"), parse_card("2C"), 4, 200)  # src ¶24


def test_fourth_buy_costs_200_at_the_end_of_the_round() -> None:
    state = position("5H 6H 7H 8H 9C 9D 9S KC", deal=1, buys=(4, 0, 0, 0))
    state, _ = apply(state, LayMelds(0, (parse_cards("5H 6H 7H 8H"), parse_cards("9C 9D 9S"))), seed=SEED)
    state, events = apply(state, Discard(0, parse_card("KC")), seed=SEED)  # D10: closing by the last discard
    ended = next(event for event in events if isinstance(event, DealEnded))
    assert ended.winner == 0
    assert ended.penalties == (200, 25, 25, 25)  # §3.13, D17: the closer pays 200 too; K Q 2 = 25
    assert isinstance(events[-1], DealStarted) and events[-1].dealer == 0  # D2: the deal rotates
    assert state.deal == 2 and state.totals == (200, 25, 25, 25) and buying(state).buys == (0, 0, 0, 0)


def test_laydown_is_exactly_the_contract_once() -> None:
    state = position("5H 6H 7H 8H 9C 9D 9S KC KD KH 2C", deal=1)
    extra = (parse_cards("5H 6H 7H 8H"), parse_cards("9C 9D 9S"), parse_cards("KC KD KH"))
    assert refused(state, LayMelds(0, extra)) == "not_the_contract"  # D7
    assert refused(state, LayMelds(0, extra[1:])) == "not_the_contract"
    assert refused(state._replace(deal=3), LayMelds(0, extra[:2])) == "not_the_contract"
    state, _ = apply(state, LayMelds(0, extra[:2]), seed=SEED)
    assert refused(state, LayMelds(0, extra[2:])) == "already_laid_down"  # §3.8.2


def test_lay_off_and_joker_take_only_after_laying_down() -> None:
    table = [("4D 5D JK 7D", 1), ("QS QH JK", 2)]
    state = position("6D QD 3C", table=table, opened=(False, True, True, False))
    assert refused(state, LayOff(0, 1, parse_cards("QD"))) == "not_opened"  # src ¶20
    assert refused(state, SwapJoker(0, 0, parse_cards("6D"))) == "not_opened"
    state = state._replace(opened=(True, True, True, False))
    assert refused(state, SwapJoker(0, 1, parse_cards("QD"))) == "joker_swap_not_allowed"  # never threes
    state, _ = apply(state, SwapJoker(0, 0, parse_cards("6D")), seed=SEED)  # §3.9.3: the exact card
    assert state.melds[0].cards == parse_cards("4D 5D 6D 7D")
    assert sorted(state.hands[0]) == sorted(parse_cards("QD 3C JK"))  # D9: the joker goes to the hand
    state, _ = apply(state, LayOff(0, 1, parse_cards("QD")), seed=SEED)  # D8: on anyone's meld
    state, _ = apply(state, LayOff(0, 0, parse_cards("JK"), at=End.HIGH), seed=SEED)
    assert state.melds[0].cards == parse_cards("4D 5D 6D 7D JK")


def test_round_eight_has_no_buying_and_closes_with_the_whole_hand_ending_the_match() -> None:
    hand = "AH 2H 3H 4H 9S 10S JS QS 5C 5D 5D KH KC"
    state = position(hand, deal=8, phase=Phase.DRAW, stock="JK 2C", discard="7H 8C", totals=(10, 20, 30, 40))
    state, events = apply(state, DrawFromStock(0), seed=SEED)
    assert refused(state, BuyDiscard(2)) == "no_buying_in_round_8"  # src ¶30
    part = (parse_cards("AH 2H 3H 4H"), parse_cards("9S 10S JS QS"), parse_cards("5C 5D 5D"))
    assert refused(state, LayMelds(0, (*part, parse_cards("KH KC JK")[:2]))) == "meld_too_short"
    assert refused(state, LayMelds(0, (*part[:2], parse_cards("5C 5D 5D KH")))) == "not_a_meld"
    state, events = apply(state, LayMelds(0, (*part, parse_cards("KH KC JK"))), seed=SEED)  # src ¶32, D11
    ended = next(event for event in events if isinstance(event, DealEnded))
    assert ended.winner == 0 and ended.penalties == (0, 25, 25, 25)
    assert events[-1] == GameEnded((0,), (10, 45, 55, 65), (), SEED)  # src ¶44: lowest total
    assert state.phase is Phase.GAME_OVER


def test_round_eight_laydown_must_use_every_card() -> None:
    hand = "AH 2H 3H 4H 9S 10S JS QS 5C 5D 5D KH KC JK 7C"
    state = position(hand, deal=8)
    melds = (
        parse_cards("AH 2H 3H 4H"),
        parse_cards("9S 10S JS QS"),
        parse_cards("5C 5D 5D"),
        parse_cards("KH KC JK"),
    )
    assert refused(state, LayMelds(0, melds)) == "whole_hand_required"  # §3.11.2
    state, events = apply(state, Discard(0, parse_card("7C")), seed=SEED)
    assert not any(isinstance(event, BuyOffered) for event in events)


def test_empty_stock_reshuffles_all_but_the_top_discard() -> None:
    state = position("7H 8C", phase=Phase.DRAW, stock="", discard="2C 3C 4C 9D")
    state, events = apply(state, DrawFromStock(0), seed=SEED)  # D16
    assert isinstance(events[0], StockReshuffled)
    assert sorted(events[0].cards) == sorted(parse_cards("2C 3C 4C"))
    assert state.discard == parse_cards("9D") and len(state.stock) == 2


def test_empty_stock_and_no_discards_to_reshuffle_ends_the_round_without_closer() -> None:
    state = position("7H 8C", phase=Phase.DRAW, stock="", discard="9D")
    state, events = apply(state, DrawFromStock(0), seed=SEED)  # D16
    assert events[0] == DealEnded(None, False, (10, 25, 25, 25))
    assert state.deals_done == 1 and state.deal == 4


def test_upcard_offered_with_the_deal_but_not_in_round_eight() -> None:
    state = replay([start("contract", 4, SEED)])
    assert buying(state).offer is state.discard[-1]  # src ¶25, D15
    assert buying(state).offer_from is None and len(buyers(state)) == 3


def test_single_round_game_plays_its_contract_and_ends_after_it() -> None:
    first = start("contract", 4, SEED, first_round=3, last_round=3, first_dealer=1)
    state = replay([first])
    assert (state.deal, state.dealer, state.turn) == (3, 1, 2)  # §3.14.4: the dealer the rotation sets
    assert buying(state).offer is state.discard[-1]  # round 3 buys as usual (src ¶25)
    state = position("2H 3H 4H 5H 9S 10S JS QS KC", first_round=3, last_round=3, totals=(0, 5, 0, 0))
    assert (
        refused(state, LayMelds(0, (parse_cards("2H 3H 4H 5H"),))) == "not_the_contract"
    )  # round 3: two runs
    state, _ = apply(state, LayMelds(0, (parse_cards("2H 3H 4H 5H"), parse_cards("9S 10S JS QS"))), seed=SEED)
    state, events = apply(state, Discard(0, parse_card("KC")), seed=SEED)
    ended = next(event for event in events if isinstance(event, DealEnded))
    assert ended.winner == 0 and ended.penalties == (0, 25, 25, 25)  # the closer, as scoring reads it
    assert events[-1] == GameEnded((0,), (0, 30, 25, 25), (), SEED)  # no further round
    assert state.phase is Phase.GAME_OVER


def test_game_of_rounds_two_to_three_deals_round_three_next() -> None:
    state = position("5C 5D 5H 9S 9D 9C KC", deal=2, first_round=2, last_round=3)
    state, _ = apply(state, LayMelds(0, (parse_cards("5C 5D 5H"), parse_cards("9S 9D 9C"))), seed=SEED)
    state, events = apply(state, Discard(0, parse_card("KC")), seed=SEED)
    assert isinstance(events[-1], DealStarted) and events[-1].deal == 3
    assert state.deal == 3 and state.phase is Phase.DRAW


def test_round_eight_alone_keeps_its_rules() -> None:
    state = replay([start("contract", 4, SEED, first_round=8, last_round=8)])
    assert state.deal == 8 and buying(state).offer is None  # src ¶30: no buying in round 8
    hand = "AH 2H 3H 4H 9S 10S JS QS 5C 5D 5D KH KC JK 7C"
    melds = tuple(parse_cards(m) for m in ("AH 2H 3H 4H", "9S 10S JS QS", "5C 5D 5D", "KH KC JK"))
    state = position(hand, deal=8, first_round=8, last_round=8)
    assert refused(state, LayMelds(0, melds)) == "whole_hand_required"  # §3.11.2


@pytest.mark.parametrize(
    "options",
    [
        {"first_round": 0},
        {"first_round": 9, "last_round": 9},
        {"last_round": 9},
        {"first_round": 5, "last_round": 4},
        {"first_round": True},
        {"first_dealer": 4},
        {"first_dealer": -1},
    ],
)
def test_bad_round_and_dealer_options_refused(options: dict[str, int]) -> None:
    with pytest.raises(RuleViolation) as caught:
        start("contract", 4, SEED, **options)
    assert caught.value.code == "bad_option_value" and caught.value.message


def test_every_round_plays_alone_to_one_closer_with_random_bots() -> None:
    for round_number in range(1, 9):
        options = {"first_round": round_number, "last_round": round_number}
        result = simulate("contract", 4, bytes([round_number]) * 16, random_legal, options=options)
        ends = [event for event in result.events if isinstance(event, DealEnded)]
        assert result.finished and len(ends) == 1 and result.final.deal == round_number
        assert not any(isinstance(event, DealStarted) for event in result.events)
        winner = ends[0].winner
        assert winner is None or not result.final.hands[winner]  # the closer emptied their hand


def test_the_buy_window_is_contract_state_not_shared_state() -> None:
    """Issue 28: the shared GameState names no contract idea; the window survives a snapshot."""
    assert not {field for field in ContractState.__dataclass_fields__} & set(GameState._fields)
    state, _ = apply(offered(), BuyDiscard(2), seed=SEED)
    assert buying(state) == ContractState((0, 0, 0, 0), parse_card("7H"), 0, 2)
    assert from_dict(json.loads(json.dumps(to_dict(state)))) == state
    assert buying(replay([start("kalooki", 3, SEED)])) == ContractState((0, 0, 0))  # nothing to buy
