"""The engine's own facts about a table, logged in the game's stream beside the rules events.

The rules engine knows seats, not people or clocks: who sits where, which turns the engine played for
an absent player and who is away are the engine's business. They are events (cases 40+ of
`GameEvent`, mapped by name like the rules events) so that a restart, a replay and every consumer of
the topic read them from the log instead of from command-id conventions or memory. The engine writes
them, every reader of a game's log decodes them: they are part of the event format, kept here with it.
"""

from __future__ import annotations

from dataclasses import dataclass

from rummy_rules.events import OptionValue


@dataclass(frozen=True, slots=True)
class TableSeated:
    """Who sits where (seat order), the table's turn limit (0 = engine default), who asked for it,
    and the limit in force (the default resolved), so a dispute about a timeout can be checked; the
    names shown for the seats at seating, which seats are programs, and whether the game is rated."""

    player_ids: tuple[str, ...]
    turn_timeout_ms: int
    options: tuple[tuple[str, OptionValue], ...]
    requested_by: str
    turn_limit_in_force_ms: int = 0
    player_names: tuple[str, ...] = ()
    bots: tuple[bool, ...] = ()
    rated: bool = False


@dataclass(frozen=True, slots=True)
class TurnTimedOut:
    """The engine plays `seat`'s turn: the rules events of the same command are its default action."""

    seat: int
    in_a_row: int
    away: bool
    limit_ms: int = 0  # the time the seat was given: the turn limit in force, or the away grace


@dataclass(frozen=True, slots=True)
class PlayerAway:
    seat: int


@dataclass(frozen=True, slots=True)
class PlayerReturned:
    seat: int


@dataclass(frozen=True, slots=True)
class SeedContributed:
    """A seat's own seed, sent before the first deal: every shuffle of the game mixes it in
    (`rummy_rules.secret.mixed_seed`). Public: without the server's seed it predicts nothing."""

    seat: int
    seed: bytes


Fact = TableSeated | TurnTimedOut | PlayerAway | PlayerReturned | SeedContributed
"""Every engine fact (a union, like `rummy_rules.events.Event`)."""
