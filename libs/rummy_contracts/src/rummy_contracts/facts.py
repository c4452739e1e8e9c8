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
    names shown for the seats at seating, which seats are programs, whether the game is rated, and
    each seat's time bank in force (the table's, or the engine's default)."""

    player_ids: tuple[str, ...]
    turn_timeout_ms: int
    options: tuple[tuple[str, OptionValue], ...]
    requested_by: str
    turn_limit_in_force_ms: int = 0
    player_names: tuple[str, ...] = ()
    bots: tuple[bool, ...] = ()
    rated: bool = False
    time_bank_ms: int = 0


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


@dataclass(frozen=True, slots=True)
class SeatDisconnected:
    """`seat`'s last stream closed during the game: it keeps its place until `grace_ends_at_ms` (epoch
    ms, the engine's clock, logged so a restart and a dispute read the same deadline); then its bank
    runs, then `forfeit_after_turns` turns are played for it, then it forfeits (meldstream M3)."""

    seat: int
    grace_ms: int
    grace_ends_at_ms: int
    forfeit_after_turns: int


@dataclass(frozen=True, slots=True)
class SeatReconnected:
    seat: int


@dataclass(frozen=True, slots=True)
class TimeBankUsed:
    """`seat` spent `used_ms` of its time bank on a turn past its limit (first in the command of its
    next action or timeout), so the bank left is derivable from the log."""

    seat: int
    used_ms: int


Fact = (
    TableSeated
    | TurnTimedOut
    | PlayerAway
    | PlayerReturned
    | SeedContributed
    | SeatDisconnected
    | SeatReconnected
    | TimeBankUsed
)
"""Every engine fact (a union, like `rummy_rules.events.Event`)."""
