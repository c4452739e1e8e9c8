"""The turn timer's default action: what the engine plays for a seat whose player did not act in time.

Drawing from the stock (the discard pile only when the stock is empty) and then discarding what the
greedy bot would discard: a neutral move that never lays the absent player's cards on the table. Where
no discard is legal (rummy40 D11: the last card can never be discarded) the greedy bot picks among
all legal actions. The choice is deterministic from the game id and seq, so it can be explained later.
"""

from __future__ import annotations

import hashlib
import random

from rummy_rules.bots import greedy
from rummy_rules.commands import Command, Discard, DrawFromStock
from rummy_rules.game import legal_actions
from rummy_rules.seat_view import SeatView
from rummy_rules.state import GameState


def default_action(state: GameState, seat: int, game_id: str, seq: int) -> Command:
    actions = legal_actions(state, seat)
    if not actions:
        raise ValueError(f"seat {seat} has nothing to do")
    rng = random.Random(hashlib.sha256(f"{game_id}/{seq}".encode()).digest())
    draws = [a for a in actions if isinstance(a, DrawFromStock)]
    if draws:
        return draws[0]
    discards = [a for a in actions if isinstance(a, Discard)]
    return greedy(SeatView(state, seat), discards or actions, rng)
