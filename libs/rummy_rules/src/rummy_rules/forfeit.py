"""meldstream M3: a seat forfeits the match. The rules say what it means; the engine says when.

A forfeit is one rules event (`SeatForfeited`) that the fold applies like any other, so a replay of
the log needs no clock and no knowledge of why the seat left (a player gone past every grace, in the
engine's presence rules). The forfeiting seat scores the worst result of the deal in play: the
points the worst-placed seat still in the deal would score if the deal ended now with nobody out
(its own hand counted with the others'); it takes no further turn and no later deal; and it is never
a match winner, ranking below every seat that did not forfeit. The others play on while at least two
remain; otherwise the match ends at once, won by the seat left.
"""

from __future__ import annotations

from rummy_rules.errors import RuleViolation
from rummy_rules.events import Event, GameEnded, SeatForfeited
from rummy_rules.evolve import evolve, evolved
from rummy_rules.secret import Seed, secret
from rummy_rules.state import DRAW, GAME_OVER, PLAY, GameState, others_may_act
from rummy_rules.variant import REGISTRY


def worst_deal_points(state: GameState) -> int:
    """The worst deal score of a seat still in the deal, were it to end now with nobody out."""
    variant = REGISTRY[state.rules.variant]
    points = variant.deal_points(state, None, False)
    counted = [points[seat] for seat, alive in enumerate(state.active) if alive]
    return min(counted) if variant.higher_is_better else max(counted)


def forfeit(state: GameState, seat: int, seed: Seed) -> list[Event]:
    """The events of `seat` forfeiting now: `SeatForfeited`, and `GameEnded` when fewer than two
    seats are left to play. A card on offer (contract) is first closed as if the forehand drew from
    the stock, so only the seat to move may forfeit while one is. Refused (RuleViolation) outside a
    deal in play, for a seat not playing, and for another seat while a card is on offer."""
    # Each variant's decision on meldstream M3 is its citation.
    if state.phase is not DRAW and state.phase is not PLAY:
        raise RuleViolation(
            "not_in_play", "a seat forfeits only while a deal is being played", state.rules.cite("forfeit")
        )
    if not 0 <= seat < len(state.active) or not state.active[seat]:
        raise RuleViolation("not_playing", f"seat {seat} is not playing", state.rules.cite("forfeit"))
    variant = REGISTRY[state.rules.variant]
    events: list[Event] = []
    if others_may_act(state):
        if seat != state.turn:
            raise RuleViolation(
                "offer_open",
                "a card is on offer: only the seat to move may forfeit",
                state.rules.cite("forfeit"),
            )
        events = variant.close_offer(state, seed, taken_by_forehand=False)
        state = evolved(state, events)
        if state.phase is GAME_OVER:  # closing the offer ended the deal and the match (D16, M1)
            return events
    forfeited = SeatForfeited(seat, worst_deal_points(state))
    events.append(forfeited)
    after = evolve(state, forfeited)
    if sum(after.active) >= 2:
        return events
    winners = tuple(s for s, alive in enumerate(after.active) if alive)
    payouts = variant.forfeit_payouts(after, winners)
    events.append(GameEnded(winners, after.totals, payouts, secret(state, seed)))
    return events
