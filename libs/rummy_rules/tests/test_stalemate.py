"""Stalled deals end (meldstream M1, rules README): scripted positions nobody can finish, per variant.

Each position has every player opened (laid down) holding cards that fit no meld they may build
on, and a stock of cards that fit nothing either. The players draw from the stock and throw the
drawn card back, so no card is ever melded, laid off or swapped: the deal must end at the
`stalemate_reshuffles`-th stock rebuild, void or scored as M1 says.
"""

from __future__ import annotations

from collections.abc import Sequence

from rummy_rules.cards import parse_cards
from rummy_rules.commands import Command, Discard, DrawFromStock, LayOff, TakeDiscard
from rummy_rules.contract_state import ContractState, buying
from rummy_rules.events import DealEnded, DealStarted, Event, GameEnded, StockReshuffled
from rummy_rules.game import STALEMATE_IDLE_ROUNDS, decide, evolve, legal_actions, replay, start
from rummy_rules.melds import hand_penalty, make_meld, meld_value
from rummy_rules.scoring import loser_penalty
from rummy_rules.serialize import from_dict, to_dict
from rummy_rules.state import GameState, Phase

SEED = bytes(range(16))
SPADES = "AS 2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS KS"


def stalled(
    variant: str,
    hands: Sequence[str],
    table: Sequence[tuple[str, int]],
    *,
    stock: str = "4C 6D 7C",
    discard: str = "9D",
    **options: int | str,
) -> tuple[list[Event], GameState]:
    """A game whose current deal is replaced by the given position, seat 0 to draw; its history."""
    first = start(variant, len(hands), SEED, **options)
    state = replay([first])
    rules = state.rules
    melds = tuple(make_meld(parse_cards(cards), rules) for cards, _ in table)
    state = state._replace(
        deal=2,
        dealer=len(hands) - 1,
        hands=tuple(parse_cards(hand) for hand in hands),
        stock=tuple(reversed(parse_cards(stock))),
        discard=parse_cards(discard),
        melds=melds,
        owners=tuple(owner for _, owner in table),
        credits=tuple((owner,) * len(meld.cards) for meld, (_, owner) in zip(melds, table, strict=True)),
        opened=tuple(True for _ in hands),
        turn=0,
        phase=Phase.DRAW,
        variant_state=None if state.variant_state is None else ContractState(buying(state).buys),
    )
    return [], state


def play_stall(state: GameState, limit: int = 400) -> tuple[list[Event], GameState, GameState]:
    """Draw from the stock and discard the drawn card until the deal ends.

    Returns the events, the final state and the position the deal ended in (hands as scored).
    """
    events: list[Event] = []
    last = state
    deal = state.deal
    for _ in range(limit):
        actions = legal_actions(state, state.turn)
        assert not any(isinstance(action, LayOff) for action in actions)  # nothing fits: a stall
        command: Command
        if state.phase is Phase.DRAW:
            command = DrawFromStock(state.turn)
            assert command in actions
        else:
            command = Discard(state.turn, state.hands[state.turn][-1])
        produced = decide(state, command, seed=SEED)
        for event in produced:
            if isinstance(event, DealEnded):
                last = state
            state = evolve(state, event)
            assert from_dict(to_dict(event)) == event
        events.extend(produced)
        if state.deal != deal or state.phase is Phase.GAME_OVER:
            return events, state, last
    raise AssertionError(f"the deal did not end in {limit} decisions")


def rebuilds(events: Sequence[Event]) -> int:
    return sum(isinstance(event, StockReshuffled) for event in events)


def ended(events: Sequence[Event]) -> DealEnded:
    (deal_ended,) = [event for event in events if isinstance(event, DealEnded)]
    return deal_ended


KALOOKI_TABLE = (("5H 5D 5C JK", 0), ("9C 9H 9S JK", 1))  # closed sets (kalooki §3.8): take nothing


def test_kalooki_stall_is_void_and_the_same_dealer_deals_again() -> None:
    _, state = stalled("kalooki", ["KC", "QD"], KALOOKI_TABLE)
    events, after, _ = play_stall(state)
    assert rebuilds(events) == 2  # the third rebuild without progress ends the deal (M1, default 3)
    deal_ended = ended(events)
    assert deal_ended.stalemate and deal_ended.winner is None and deal_ended.penalties == (0, 0)
    assert isinstance(events[-1], DealStarted) and events[-1].dealer == state.dealer  # kalooki §3.11.3
    assert after.deals_done == 0 and after.stalemates == 1 and after.totals == (0, 0)
    assert after.phase is Phase.DRAW and [len(hand) for hand in after.hands] == [13, 13]


def test_stall_counts_only_cycles_without_progress() -> None:
    _, state = stalled("kalooki", ["KC", "QD"], KALOOKI_TABLE, stalemate_reshuffles=2)
    events, _, _ = play_stall(state)
    assert rebuilds(events) == 1 and ended(events).stalemate
    # The same stall after a card was laid off in the current cycle needs one cycle more.
    _, state = stalled("kalooki", ["KC", "QD"], KALOOKI_TABLE, stalemate_reshuffles=2)
    events, _, last = play_stall(state._replace(progressed=True))
    assert rebuilds(events) == 2 and ended(events).stalemate
    assert last.stale_cycles == 1


def test_stalemate_option_zero_never_ends_a_stall() -> None:
    _, state = stalled("kalooki", ["KC", "QD"], KALOOKI_TABLE, stalemate_reshuffles=0)
    for _ in range(300):
        command: Command = (
            DrawFromStock(state.turn)
            if state.phase is Phase.DRAW
            else Discard(state.turn, state.hands[state.turn][-1])
        )
        for event in decide(state, command, seed=SEED):
            state = evolve(state, event)
    assert state.deal == 2 and state.reshuffles > 20


def test_kalooki_stall_after_the_void_cap_is_scored_and_ends_the_game() -> None:
    _, state = stalled("kalooki", ["KC", "2D"], KALOOKI_TABLE, prize_pool=1000)
    events, after, last = play_stall(state._replace(stalemates=2))
    deal_ended = ended(events)
    assert deal_ended.stalemate and deal_ended.winner is None
    assert deal_ended.penalties == tuple(loser_penalty(hand, state.rules, False) for hand in last.hands)
    assert deal_ended.penalties == (10, 2)
    assert isinstance(events[-1], GameEnded) and after.phase is Phase.GAME_OVER
    assert events[-1].winners == (1,)  # fewest points win (M1, as rummy40 D14)
    assert events[-1].payouts == ()  # no closer, no prize split
    assert replay([start("kalooki", 2, SEED, prize_pool=1000)]).deal == 1


def test_rummy40_stall_with_cards_in_others_melds_is_void_then_counts() -> None:
    # rummy40 D9: layoffs only onto own melds; 9H fits only seat 1's set, 8H only seat 0's run.
    table = (("5H 6H 7H", 0), ("9C 9D 9S", 1))
    _, state = stalled("rummy40", ["9H", "8H"], table, stock="2C 3D KS", discard="")
    events, after, _ = play_stall(state)
    deal_ended = ended(events)
    assert deal_ended.stalemate and deal_ended.winner is None and deal_ended.penalties == (0, 0)
    assert isinstance(events[-1], DealStarted) and events[-1].dealer == state.dealer  # rummy40 §3.10
    assert after.deals_done == 0
    events, after, last = play_stall(state._replace(stalemates=2))
    deal_ended = ended(events)
    assert deal_ended.stalemate and sum(deal_ended.penalties) > 0
    assert after.deals_done == 1 and after.totals == deal_ended.penalties
    assert deal_ended.penalties == tuple(hand_penalty(hand, state.rules) for hand in last.hands)


def test_rummy500_stall_ends_the_deal_scored() -> None:
    table = ((SPADES, 0),)
    _, state = stalled(
        "rummy500", ["2H", "3D"], table, discard="9D 10H", exhausted_stock="reshuffle_discards"
    )
    events, after, _ = play_stall(state)
    deal_ended = ended(events)
    assert deal_ended.stalemate and deal_ended.winner is None  # D10: scored as usual
    spades = meld_value(state.melds[0], state.rules)  # the ace low counts 1 (§3.2 D3)
    assert deal_ended.penalties == (spades - 2, -3)  # credited table value minus hand (§3.9)
    assert after.totals == deal_ended.penalties and after.deal == state.deal + 1


def test_contract_stall_ends_the_round_without_a_closer() -> None:
    table = ((SPADES, 0), ("AH 2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH", 1))
    _, state = stalled("contract", ["2D", "KC"], table)
    events, after, _ = play_stall(state)
    deal_ended = ended(events)
    assert deal_ended.stalemate and deal_ended.winner is None
    assert deal_ended.penalties == (5, 10)  # D16: everyone scores their hand
    assert after.deal == state.deal + 1 and after.deals_done == 1


def test_scored_stall_that_eliminates_everyone_ends_with_the_fewest_points() -> None:
    _, state = stalled("kalooki", ["KC", "9D"], KALOOKI_TABLE, match_mode="elimination", elimination_limit=5)
    events, after, _ = play_stall(state._replace(stalemates=2))
    assert ended(events).penalties == (10, 9)
    assert isinstance(events[-1], GameEnded) and events[-1].winners == (1,)
    assert after.active == (False, False) and after.phase is Phase.GAME_OVER


def test_players_who_only_trade_discards_end_the_deal_after_ten_idle_rounds() -> None:
    """M1's second trigger: nobody draws from the stock or melds, so no rebuild ever comes."""
    _, state = stalled("rummy40", ["5C 9D KH", "5D 9H KS"], [], stock="4C 6D 7C", discard="2H")
    turns = 0
    produced: list[Event] = []
    while not any(isinstance(event, DealEnded) for event in produced) and turns < 100:
        state, produced = _trade(state)
        turns += 1
    assert turns == STALEMATE_IDLE_ROUNDS * 2  # ten rounds of two players
    ended = next(event for event in produced if isinstance(event, DealEnded))
    assert ended.stalemate and ended.winner is None
    assert isinstance(produced[-1], DealStarted)  # the first stalemates are void and redealt (M1)
    off = stalled("rummy40", ["5C 9D KH", "5D 9H KS"], [], discard="2H", stalemate_reshuffles=0)[1]
    assert not _idle_ends(off, STALEMATE_IDLE_ROUNDS * 2)  # M1 off: no such end either


def _trade(state: GameState) -> tuple[GameState, list[Event]]:
    """One turn: take the top discard and discard another card (D8); the discard's events."""
    seat = state.turn
    produced = decide(state, TakeDiscard(seat), seed=SEED)
    for event in produced:
        state = evolve(state, event)
    card = next(card for card in state.hands[seat] if card is not state.taken)
    produced = decide(state, Discard(seat, card), seed=SEED)
    for event in produced:
        state = evolve(state, event)
    return state, produced


def _idle_ends(state: GameState, turns: int) -> bool:
    for _ in range(turns):
        state, produced = _trade(state)
        if any(isinstance(event, DealEnded) for event in produced):
            return True
    return False
