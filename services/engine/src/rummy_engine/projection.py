"""A game as the engine folds it from its log: rules state, the table's players, and turn-timer record.

The players and the turn limit travel in the command id of the game's first event (`table:{json}`):
events.proto has no event for them yet, and the log is the only durable store (snapshots are a cache).
Default actions are told apart the same way: command ids `timer/...` (the turn timer ran out) and
`away/...` (the seat was away) are the engine's, every other id is a player's own.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from typing import Any, Final

from rummy.game.v1 import events_pb2
from rummy_rules import serialize
from rummy_rules.events import CardDrawn, Event
from rummy_rules.game import evolve
from rummy_rules.state import GameState
from rummy_store import EventRecord

from rummy_engine import codec

TABLE_PREFIX: Final = "table:"
TIMER_PREFIX: Final = "timer/"
AWAY_PREFIX: Final = "away/"


@dataclass(frozen=True, slots=True)
class Table:
    """Who sits where, and the turn limit (0 = the engine's default)."""

    players: tuple[str, ...]
    turn_timeout_ms: int

    def command_id(self) -> str:
        return TABLE_PREFIX + json.dumps({"players": list(self.players), "turn_ms": self.turn_timeout_ms})

    @staticmethod
    def from_command_id(command_id: str) -> Table:
        if not command_id.startswith(TABLE_PREFIX):
            raise ValueError(f"a game's first command id names its table, got {command_id!r}")
        data = json.loads(command_id[len(TABLE_PREFIX) :])
        return Table(tuple(str(p) for p in data["players"]), int(data["turn_ms"]))


def by_engine(command_id: str) -> bool:
    """True for a default action the engine played for an absent seat."""
    return command_id.startswith((TIMER_PREFIX, AWAY_PREFIX))


def actor(event: Event) -> int | None:
    seat = getattr(event, "seat", None)
    return seat if isinstance(seat, int) else None


@dataclass(frozen=True, slots=True)
class EngineState:
    """Everything the engine needs to act on a game, rebuilt by folding its records.

    `commands` maps each command id to the (first, last) seq it appended, so a retried command is
    answered with its original outcome before any rule is checked; it is shared between successive
    states (the fold only ever adds to it).
    """

    game: GameState
    table: Table
    timeouts: tuple[int, ...]
    away: tuple[bool, ...]
    commands: dict[str, tuple[int, int]]
    last_command: str


class GameProjection:
    """The engine's fold over its own log (a `rummy_store.catch_up.Projection`)."""

    def __init__(self, away_after: int) -> None:
        self._away_after = away_after
        fields = ",".join(GameState._fields)
        # A change of the rules state's shape or of the away rule invalidates old snapshots.
        self.version = "engine-1:" + hashlib.sha256(f"{fields}/{away_after}".encode()).hexdigest()[:12]

    def initial(self, game_id: str) -> EngineState | None:
        return None

    def apply(self, state: EngineState | None, record: EventRecord) -> EngineState:
        event = codec.event_from_pb(events_pb2.GameEvent.FromString(record.payload))
        return self.fold(state, record.command_id, record.seq, event)

    def fold(self, state: EngineState | None, command_id: str, seq: int, event: Event) -> EngineState:
        if state is None:
            game = evolve(None, event)
            table = Table.from_command_id(command_id)
            seats = len(table.players)
            return EngineState(
                game, table, (0,) * seats, (False,) * seats, {command_id: (seq, seq)}, command_id
            )
        commands = state.commands
        first = commands.get(command_id, (seq, seq))[0]
        commands[command_id] = (first, seq)
        timeouts, away = state.timeouts, state.away
        seat = actor(event)
        if command_id != state.last_command and seat is not None:
            if command_id.startswith(TIMER_PREFIX) and isinstance(event, CardDrawn):
                count = timeouts[seat] + 1
                timeouts = (*timeouts[:seat], count, *timeouts[seat + 1 :])
                if count >= self._away_after:
                    away = (*away[:seat], True, *away[seat + 1 :])
            elif not by_engine(command_id):  # the player acted: present again
                timeouts = (*timeouts[:seat], 0, *timeouts[seat + 1 :])
                away = (*away[:seat], False, *away[seat + 1 :])
        return replace(
            state,
            game=evolve(state.game, event),
            timeouts=timeouts,
            away=away,
            last_command=command_id,
        )

    def dumps(self, state: EngineState | None) -> bytes:
        assert state is not None
        data: dict[str, Any] = {
            "game": serialize.to_dict(state.game),
            "players": list(state.table.players),
            "turn_ms": state.table.turn_timeout_ms,
            "timeouts": list(state.timeouts),
            "away": list(state.away),
            "commands": state.commands,
            "last_command": state.last_command,
        }
        return json.dumps(data).encode()

    def loads(self, data: bytes) -> EngineState | None:
        raw = json.loads(data)
        return EngineState(
            game=serialize.from_dict(raw["game"]),
            table=Table(tuple(raw["players"]), int(raw["turn_ms"])),
            timeouts=tuple(raw["timeouts"]),
            away=tuple(raw["away"]),
            commands={key: (int(a), int(b)) for key, (a, b) in raw["commands"].items()},
            last_command=raw["last_command"],
        )
