"""meldstream M3: a seat that forfeits scores the deal's worst result, plays no more and never wins."""

from __future__ import annotations

import random

import pytest
from rummy_rules.bots import greedy
from rummy_rules.errors import RuleViolation
from rummy_rules.events import Event, GameEnded, SeatForfeited
from rummy_rules.forfeit import forfeit, worst_deal_points
from rummy_rules.game import buyers, decide, evolve, legal_actions, replay, start
from rummy_rules.seat_view import SeatView
from rummy_rules.state import GameState, Phase, others_may_act
from rummy_rules.variant import REGISTRY

SEED = bytes(range(16))
VARIANTS = ("kalooki", "rummy40", "rummy500", "contract")


def _play(state: GameState, events: list[Event], decisions: int, rng: random.Random) -> GameState:
    """`decisions` greedy moves (contract buyers asked as `simulate` asks them), or to the game's end."""
    asked: set[int] = set()
    for _ in range(decisions):
        if state.phase is Phase.GAME_OVER:
            break
        seat = state.turn
        waiting = [b for b in buyers(state) if b not in asked] if others_may_act(state) else []
        if waiting:
            seat = waiting[0]
            asked.add(seat)
        else:
            asked.clear()
        command = greedy(SeatView(state, seat), legal_actions(state, seat), rng)
        for event in decide(state, command, seed=SEED):
            events.append(event)
            state = evolve(state, event)
    return state


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_others_play_on_and_the_forfeited_seat_never_wins(variant: str) -> None:
    first = start(variant, 3, SEED)
    events: list[Event] = [first]
    rng = random.Random(7)
    state = _play(evolve(None, first), events, 9, rng)
    seat = state.turn
    worst = worst_deal_points(state)
    produced = forfeit(state, seat, SEED)
    forfeited = [e for e in produced if isinstance(e, SeatForfeited)]
    assert forfeited == [SeatForfeited(seat, worst)]
    before_total = state.totals[seat]
    for event in produced:
        events.append(event)
        state = evolve(state, event)
    assert not state.active[seat] and state.forfeited == (seat,)
    assert state.totals[seat] == before_total + worst
    assert state.turn != seat and state.phase is Phase.DRAW
    with pytest.raises(RuleViolation) as refused:
        forfeit(state, seat, SEED)
    assert refused.value.code == "not_playing"
    state = _play(state, events, 20_000, rng)
    assert state.phase is Phase.GAME_OVER
    assert seat not in state.winners and state.winners
    assert state.totals[seat] == before_total + worst  # charged once, at the forfeit
    assert replay(events) == state


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_forfeit_that_leaves_one_seat_ends_the_match(variant: str) -> None:
    state = evolve(None, start(variant, 2, SEED))
    other = 1 - state.turn
    produced = forfeit(state, other, SEED) if not others_may_act(state) else forfeit(state, state.turn, SEED)
    ended = produced[-1]
    assert isinstance(ended, GameEnded)
    loser = next(e.seat for e in produced if isinstance(e, SeatForfeited))
    assert ended.winners == (1 - loser,)
    assert ended.seed == SEED


def test_the_worst_result_counts_every_hand_still_in_the_deal() -> None:
    state = evolve(None, start("rummy40", 3, SEED))
    points = REGISTRY["rummy40"].deal_points(state, None, False)
    assert worst_deal_points(state) == max(points)


def test_a_forfeit_outside_a_deal_in_play_is_refused() -> None:
    state = evolve(None, start("kalooki", 2, SEED))._replace(phase=Phase.DEAL_OVER)
    with pytest.raises(RuleViolation) as refused:
        forfeit(state, 0, SEED)
    assert refused.value.code == "not_in_play"
