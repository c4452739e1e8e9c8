"""A game as an event-sourced state machine: `start`, `legal_actions`, `decide`, `evolve`, `replay`.

`decide(state, command, seed=...)` checks a command against the variant's rules and returns the
events it causes, or raises `RuleViolation`; it never changes `state`. `evolve(state, event)` applies
one accepted event without validation and cannot fail. `replay(events)` folds a whole history. Deck
orders travel as data (`GameStarted.deck`, `DealStarted.deck`, `StockReshuffled.cards`), so replay
needs no randomness and no seed.

The seed is never in an event before `GameEnded` nor in the state: whoever reads the log or a
snapshot could otherwise predict every later deal and reshuffle. The caller keeps it (the engine
derives it per game) and hands it to `decide`, which uses it only for a new deal, a reshuffle or the
reveal, checking it against `GameStarted.seed_commitment` there (`secret`).

This module is the API; the rules live by concept: `deal` (dealing), `evolve` (the fold), `turn`
(the commands' handlers) with `checks`, `openings` and `stock`, `deal_end` and `stalemate` (how a
deal ends), `legal` with `table_index` (legal actions), and each variant's own rules in
`variants/<id>.py`.
"""

from __future__ import annotations

from rummy_rules.commands import Command
from rummy_rules.deal import start
from rummy_rules.events import Event
from rummy_rules.evolve import evolve, replay
from rummy_rules.legal import legal_actions
from rummy_rules.secret import Contributed, deal_seed, mixed_seed, reshuffle_seed
from rummy_rules.stalemate import STALEMATE_IDLE_ROUNDS, STALEMATE_VOIDS
from rummy_rules.state import GameState, Phase
from rummy_rules.turn import decide_command
from rummy_rules.variant import REGISTRY

__all__ = [
    "STALEMATE_IDLE_ROUNDS",
    "STALEMATE_VOIDS",
    "Contributed",
    "GameState",
    "Phase",
    "apply",
    "buyers",
    "deal_seed",
    "decide",
    "evolve",
    "legal_actions",
    "mixed_seed",
    "replay",
    "reshuffle_seed",
    "start",
]


def decide(state: GameState, command: Command, *, seed: bytes | Contributed) -> list[Event]:
    """The events `command` causes in `state`, or RuleViolation (then nothing changes).

    `seed` is the game's secret seed (`start`'s): it orders the next deal or a reshuffle and is
    revealed in `GameEnded`; with the seats' own seeds (`Contributed`) every shuffle uses their
    `mixed_seed`. One whose SHA-256 is not `state.seed_commitment` raises ValueError (a
    caller's bug, not a rule violation), checked only when the decision needs the seed.
    """
    return decide_command(state, command, seed)


def apply(state: GameState, command: Command, *, seed: bytes | Contributed) -> tuple[GameState, list[Event]]:
    """`decide` then `evolve` every resulting event: the new state and the events to append."""
    events = decide(state, command, seed=seed)
    for event in events:
        state = evolve(state, event)
    return state, events


def buyers(state: GameState) -> tuple[int, ...]:
    """Seats that may still ask to buy the card on offer, from the forehand's left (contract §3.7.3)."""
    return REGISTRY[state.rules.variant].buyers(state)
