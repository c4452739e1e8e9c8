"""Property tests over random complete matches of rummy500 and contract, buying included.

Each seat plays the greedy bot most of the time and a random legal action other than a discard
otherwise, so matches finish (random discards rarely assemble a contract) while every kind of
action, including buys, fourth buys and deep pile picks, gets played. Buying is out of turn: while
a card is on offer, every seat that may buy is asked (buy or pass) before the forehand moves.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rummy_rules.bots import SeatView, greedy
from rummy_rules.commands import BuyDiscard, Command, Discard, DrawFromStock, PickFromPile
from rummy_rules.events import BuyGranted, DealEnded, Event
from rummy_rules.game import buyers
from rummy_rules.state import GameState, Phase

from .playouts import Playout, card_not_held


def illegal_commands(state: GameState, rng: random.Random) -> list[Command]:
    """Commands that must be refused now: out of turn, cards not held, buys nobody may make."""
    turn = state.turn
    idle = [seat for seat in range(len(state.hands)) if seat != turn and seat not in buyers(state)]
    commands: list[Command] = [Discard(turn, card_not_held(state, rng)), BuyDiscard(turn)]
    commands.extend(DrawFromStock(seat) for seat in idle)
    commands.extend(BuyDiscard(seat) for seat in idle)
    if state.phase is Phase.PLAY:
        commands.append(DrawFromStock(turn))
    top_free = getattr(state.rules.options, "top_discard_free", False)
    if state.rules.variant == "contract" or len(state.discard) > 1 or not top_free:
        commands.append(PickFromPile(turn, 0))  # contract: no deep picks; rummy500 D7: never unused
    return commands


def choose(state: GameState, seat: int, actions: tuple[Command, ...], rng: random.Random) -> Command:
    """Mostly the greedy bot; sometimes any legal action other than a discard (discards stay greedy)."""
    others = [action for action in actions if not isinstance(action, Discard)]
    if others and rng.random() < 0.1:
        return rng.choice(others)
    return greedy(SeatView(state, seat), actions, rng)


def check_result(state: GameState, events: list[Event]) -> None:
    rules = state.rules
    deals = [event for event in events if isinstance(event, DealEnded)]
    totals = [sum(points) for points in zip(*(deal.penalties for deal in deals), strict=True)]
    assert tuple(totals) == state.totals
    if rules.variant == "contract":
        assert len(deals) == 8  # src ¶1
        assert state.winners == tuple(seat for seat, total in enumerate(totals) if total == min(totals))
        buys: Counter[tuple[int, int]] = Counter()
        round_number = 1
        for event in events:
            if isinstance(event, DealEnded):
                round_number += 1
            elif isinstance(event, BuyGranted):
                buys[(round_number, event.seat)] += 1
                assert round_number < 8  # src ¶30
                assert event.penalty == (200 if event.buys_this_round == 4 else 0)  # src ¶24, D13
        assert max(buys.values(), default=0) <= 4
    else:
        (winner,) = state.winners
        assert totals[winner] >= rules.deals and totals[winner] == max(totals)  # src ¶11, D13
        assert totals.count(totals[winner]) == 1
        assert sum(state.payouts) == 0 and state.payouts[winner] > 0  # D14


MATCHES = Playout(choose, illegal_commands, check_result, out_of_turn=buyers, state_round_trip_every=40)

seeds = st.binary(min_size=16, max_size=16)


@pytest.mark.parametrize(
    ("variant", "players", "options"),
    [("contract", 4, {}), ("rummy500", 3, {"target_score": 250})],
)
def test_all_matches_finish(variant: str, players: int, options: dict[str, int]) -> None:
    """A contract round can stall (every card that fits a meld is laid already, so nobody can lay
    off and go out); meldstream M1 ends it with no closer, so every match finishes (`Playout.play`)."""
    for index in range(10):
        MATCHES.play(variant, players, index.to_bytes(16, "big"), thorough=False, **options)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=seeds, players=st.integers(2, 6))
def test_random_contract_matches_keep_every_invariant(seed: bytes, players: int) -> None:
    MATCHES.play("contract", players, seed, thorough=True)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=seeds, players=st.integers(2, 6))
def test_random_rummy500_matches_keep_every_invariant(seed: bytes, players: int) -> None:
    MATCHES.play("rummy500", players, seed, thorough=True, target_score=120)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=seeds,
    options=st.fixed_dictionaries(
        {
            "top_discard_free": st.booleans(),
            "going_out_requires_discard": st.booleans(),
            "exhausted_stock": st.sampled_from(
                ["continue_with_discards_then_end", "end_immediately", "reshuffle_discards"]
            ),
            "target_score": st.sampled_from([60, 200]),
        }
    ),
)
def test_random_rummy500_matches_with_house_rules(seed: bytes, options: dict[str, int | bool | str]) -> None:
    MATCHES.play("rummy500", 3, seed, thorough=True, **options)


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=seeds,
    options=st.fixed_dictionaries(
        {
            "fourth_buy": st.sampled_from(["penalty", "reject"]),
            "threes_same_rank_allowed": st.booleans(),
            "closing_by_discard": st.booleans(),
        }
    ),
)
def test_random_contract_matches_with_house_rules(seed: bytes, options: dict[str, int | bool | str]) -> None:
    MATCHES.play("contract", 4, seed, thorough=True, **options)


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=seeds, players=st.integers(2, 7))
def test_many_contract_matches_conserve_cards_and_replay(seed: bytes, players: int) -> None:
    MATCHES.play("contract", players, seed, thorough=False)  # finishes, a stalled round too (M1)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=seeds, players=st.integers(2, 6), target=st.sampled_from([100, 250, 500]))
def test_thousand_rummy500_matches_finish_with_cards_conserved(
    seed: bytes, players: int, target: int
) -> None:
    MATCHES.play("rummy500", players, seed, thorough=False, target_score=target)  # finishes
