"""The end of a deal: the variant scores it, then either the match ends or the next deal starts."""

from __future__ import annotations

from rummy_rules.deal import new_deal, next_seat
from rummy_rules.events import DealEnded, Event
from rummy_rules.evolve import evolve
from rummy_rules.secret import Seed
from rummy_rules.stalemate import stalemate_voids
from rummy_rules.state import GameState
from rummy_rules.variant import REGISTRY


def deal_over(
    state: GameState, seed: Seed, winner: int | None, kalooki: bool, stalemate: bool = False
) -> list[Event]:
    """DealEnded and what follows it: the next deal or the end of the game (with the revealed seed).

    `state` is the position after the closing move, so hands and table are final.
    """
    variant = REGISTRY[state.rules.variant]
    ended = DealEnded(winner, kalooki, variant.deal_points(state, winner, kalooki), stalemate)
    after = evolve(state, ended)
    game_end = variant.match_over(state, after, ended, seed)
    if game_end is not None:
        return [ended, *game_end]
    dealer = next_seat(after.active, state.dealer)  # kalooki D2, rummy40 src S1: the deal rotates
    return [ended, new_deal(state, dealer, seed)]


def end_stalled_deal(state: GameState, seed: Seed) -> list[Event]:
    """The end of a deal stopped by meldstream M1: void and redealt, or scored (`stalemate_voids`)."""
    if stalemate_voids(state):
        zeros = tuple(0 for _ in state.active)
        return [DealEnded(None, False, zeros, stalemate=True), new_deal(state, state.dealer, seed)]
    return deal_over(state, seed, None, kalooki=False, stalemate=True)
