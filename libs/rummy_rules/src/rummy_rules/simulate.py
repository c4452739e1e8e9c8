"""Complete games between bots, with no services: deterministic from one seed.

The game seed deals the cards (`game.start`); each seat's bot gets its own `random.Random`
derived from the same seed, so `simulate(...)` with equal arguments returns equal events.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rummy_rules.events import Event, OptionValue
from rummy_rules.game import buyers, decide, evolve, legal_actions, start
from rummy_rules.seat_view import Bot, SeatView
from rummy_rules.state import GameState, Phase, others_may_act


@dataclass(frozen=True, slots=True)
class SimulationResult:
    """The full event history, the final state, and how many decisions the bots made.

    `finished` is False when the game was stopped at `max_decisions` before it ended.
    """

    events: tuple[Event, ...]
    final: GameState
    decisions: int
    finished: bool

    @property
    def winners(self) -> tuple[int, ...]:
        return self.final.winners

    @property
    def totals(self) -> tuple[int, ...]:
        return self.final.totals


def bot_rng(seed: bytes, seat: int) -> random.Random:
    """The random stream of the bot at `seat`, derived from the game seed."""
    return random.Random(hashlib.sha256(seed + b"/bot/" + seat.to_bytes(2, "big")).digest())


def simulate(
    variant: str,
    players: int,
    seed: bytes,
    bots: Bot | Sequence[Bot],
    *,
    options: Mapping[str, OptionValue] | None = None,
    max_decisions: int = 200_000,
) -> SimulationResult:
    """Play one game to its end (or `max_decisions`); one bot for all seats or one per seat.

    A decision is one `legal_actions` query plus one applied command (`decide` and `evolve`).
    Contract buying is out of turn: while a card is on offer, each seat that may buy is asked once
    (buy or pass), in order from the forehand's left, before the forehand moves.
    """
    seat_bots = [bots] * players if callable(bots) else list(bots)
    if len(seat_bots) != players:
        raise ValueError(f"{players} players need {players} bots, got {len(seat_bots)}")
    first = start(variant, players, seed, **dict(options or {}))
    events: list[Event] = [first]
    state = evolve(None, first)
    rngs = [bot_rng(seed, seat) for seat in range(players)]
    decisions = 0
    asked: set[int] = set()
    while state.phase is not Phase.GAME_OVER and decisions < max_decisions:
        seat = state.turn
        if others_may_act(state):
            waiting = [buyer for buyer in buyers(state) if buyer not in asked]
            if waiting:
                seat = waiting[0]
                asked.add(seat)
        if seat == state.turn:
            asked.clear()
        actions = legal_actions(state, seat)
        command = seat_bots[seat](SeatView(state, seat), actions, rngs[seat])
        produced = decide(state, command, seed=seed)
        for event in produced:
            state = evolve(state, event)
        events.extend(produced)
        decisions += 1
    return SimulationResult(tuple(events), state, decisions, state.phase is Phase.GAME_OVER)
