"""A game as the engine folds it from its log: rules state, the table's players, and turn-timer record.

Everything here comes from events (rules events and the engine's facts, `rummy_contracts.facts`),
never from command ids or memory, so a restarted engine, a replay and a snapshot all agree on who sits
where, who timed out and who is away. Command ids only identify commands (idempotency).

It lives with the event format rather than in the engine because every reader of a log folds it this
one way: the engine to act, `meldstream replay` and the web gateway's export to show the state after
each event. So those readers import no engine code, and cannot fold a game differently from it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Final

from rummy.game.v1 import events_pb2
from rummy_rules import serialize
from rummy_rules.events import GameStarted
from rummy_rules.game import evolve
from rummy_rules.out_of_turn import OUT_OF_TURN_OPENERS
from rummy_rules.state import GameState, shape
from rummy_store import EventRecord

from rummy_contracts import event_format
from rummy_contracts.event_format import Logged
from rummy_contracts.facts import (
    Fact,
    PlayerAway,
    PlayerReturned,
    SeatDisconnected,
    SeatReconnected,
    SeedContributed,
    TableSeated,
    TimeBankUsed,
    TurnTimedOut,
)

ENGINE_PREFIX: Final = "engine/"
"""Command ids the engine writes itself (`engine/create`, `engine/turn/<seq>`, ...); refused from clients."""


@dataclass(frozen=True, slots=True)
class Table:
    """Who sits where, and the turn limit (0 = the engine's default); the names shown for the seats
    (empty in older games: the ids are shown), which seats are programs, who created the table,
    whether it is rated, and each seat's time bank for the game (in force, 0 = none)."""

    players: tuple[str, ...]
    turn_timeout_ms: int
    names: tuple[str, ...] = ()
    bots: tuple[bool, ...] = ()
    requested_by: str = ""
    rated: bool = False
    time_bank_ms: int = 0

    def name(self, seat: int) -> str:
        return self.names[seat] if seat < len(self.names) and self.names[seat] else self.players[seat]

    def bot(self, seat: int) -> bool:
        return seat < len(self.bots) and self.bots[seat]


UNSEATED: Final = Table((), 0)
"""The table between GameStarted and TableSeated (both are appended by one command)."""


_OPENED_BY_SENDER: Final = (
    *OUT_OF_TURN_OPENERS,
    PlayerReturned,
    SeedContributed,
    SeatDisconnected,
    SeatReconnected,
    TimeBankUsed,
)
"""The first events that name the seat that sent their command: an out-of-turn command's (rules
`OUT_OF_TURN`), a returning player's, a seat's seed, its presence and its bank. Every other command
is the seat to move's, whatever seat its first event names: a forehand's draw can open with the
buyer's BuyGranted."""


def actor(event: Logged, turn: int | None = None) -> int | None:
    """Whose `event` is: the seat it names (None for an event of the whole table); or, given `turn`
    (the seat to move before it) for the first event of a command, the seat that sent the command."""
    if turn is not None and not isinstance(event, _OPENED_BY_SENDER):
        return turn
    seat = getattr(event, "seat", None)
    return seat if isinstance(seat, int) else None


def _with(values: tuple[Any, ...], seat: int, value: Any) -> tuple[Any, ...]:
    return (*values[:seat], value, *values[seat + 1 :])


COMMANDS_KEPT: Final = 256
"""Command ids a game remembers (the latest): a retry comes seconds after its command, not hundreds
of commands later, and a snapshot or a game in memory must not grow with the game's length."""


@dataclass(frozen=True, slots=True)
class Sent:
    """A command in the log: the seqs it appended, the seat that sent it (`actor` of its first event)
    and the digest of the request as sent (`command_digest` in its events; "" for the engine's own
    commands)."""

    first: int
    last: int
    seat: int
    digest: str


@dataclass(frozen=True, slots=True)
class EngineState:
    """Everything the engine needs to act on a game, rebuilt by folding its records.

    `commands` maps the latest `COMMANDS_KEPT` command ids to what they appended and who sent what, so
    a retried command is answered with its original outcome before any rule is checked, and only to
    the seat that sent it, for the same request. The map is shared between successive states (the
    fold only adds to it and drops its oldest). `engine_command` is the latest command that began with
    `TurnTimedOut`: its events were played by the engine for an absent seat. `seeds` are the seats'
    own seeds (`SeedContributed`, b"" for none), mixed into every shuffle.

    Presence (`presence.py`, meldstream M3), per seat: `grace_ends` the epoch ms a disconnected seat's
    grace ends (0: connected), `forfeit_after` the turns the engine plays for it after the grace before
    it forfeits, `auto_turns` those played so far (its TurnTimedOut since it disconnected), and
    `bank_used` the time bank it spent (TimeBankUsed).
    """

    game: GameState
    table: Table
    timeouts: tuple[int, ...]
    away: tuple[bool, ...]
    commands: dict[str, Sent]
    engine_command: str
    seeds: tuple[bytes, ...] = ()
    grace_ends: tuple[int, ...] = ()
    forfeit_after: tuple[int, ...] = ()
    auto_turns: tuple[int, ...] = ()
    bank_used: tuple[int, ...] = ()

    def gone(self, seat: int) -> bool:
        """Whether `seat`'s player is disconnected (its grace running or over) and it still plays."""
        return bool(self.grace_ends[seat]) and self.game.active[seat]

    def bank_left(self, seat: int) -> int:
        return max(0, self.table.time_bank_ms - self.bank_used[seat])

    def by_engine(self, command_id: str) -> bool:
        """True for the events of the engine's latest default turn (call with the state after them)."""
        return command_id == self.engine_command


def engine_commands(messages: Iterable[events_pb2.GameEvent]) -> set[str]:
    """The command ids of a history whose events the engine played for an absent seat."""
    return {m.command_id for m in messages if m.WhichOneof("event") == "turn_timed_out"}


class GameProjection:
    """The fold over a game's log as the engine writes it (a `rummy_store.catch_up.Projection`)."""

    def __init__(self) -> None:
        # A change of the rules state's shape or of this fold invalidates old snapshots.
        self.version = "engine-7:" + hashlib.sha256(shape().encode()).hexdigest()[:12]

    def initial(self, game_id: str) -> EngineState | None:
        return None

    def apply(self, state: EngineState | None, record: EventRecord) -> EngineState:
        """The state after `record`; raises for a record that is not this game's next event as the
        engine writes it (another event format, a payload that does not parse or is not what its
        headers say, an event the rules refuse), which `CatchUpReader` skips and reports."""
        try:
            message = event_format.message_of(record)
            says = (message.game_id, message.seq, message.WhichOneof("event"))
            if says != (record.game_id, record.seq, record.event_type):
                raise ValueError(
                    f"the payload is game {says[0]!r:.50} seq {says[1]} {says[2]}, not what its headers say"
                )
            event = event_format.event_from_pb(message)
        except event_format.OtherEventFormat as exc:  # one stray record; a whole store is refused at start
            raise ValueError(exc.reason) from None
        return self.fold(state, record.command_id, record.seq, event, message.command_digest)

    def fold(
        self, state: EngineState | None, command_id: str, seq: int, event: Logged, digest: str = ""
    ) -> EngineState:
        if state is None:
            if not isinstance(event, GameStarted):
                raise ValueError(f"a game's stream starts with GameStarted, not {type(event).__name__}")
            return EngineState(
                evolve(None, event), UNSEATED, (), (), {command_id: Sent(seq, seq, -1, "")}, ""
            )
        if isinstance(event, Fact):
            after = _fact(state, command_id, event)
        else:
            timeouts = state.timeouts
            seat = actor(event)
            if seat is not None and timeouts[seat] and not state.by_engine(command_id):
                timeouts = _with(timeouts, seat, 0)  # the player acted: no longer timing out
            after = replace(state, game=evolve(state.game, event), timeouts=timeouts)
        # Only now, with the event applied: the map is shared with the state before it, which must
        # stay as it was when the event is refused.
        commands = state.commands
        sent = commands.get(command_id)
        if sent is None:
            sender = actor(event, state.game.turn)
            assert sender is not None  # every event that names its sender names a seat
            commands[command_id] = Sent(seq, seq, sender, digest)
            if len(commands) > COMMANDS_KEPT:
                del commands[next(iter(commands))]
        else:
            commands[command_id] = replace(sent, last=seq)
        return after

    def dumps(self, state: EngineState | None) -> bytes:
        assert state is not None
        data: dict[str, Any] = {
            "game": serialize.to_dict(state.game),
            "players": list(state.table.players),
            "turn_ms": state.table.turn_timeout_ms,
            "names": list(state.table.names),
            "bots": list(state.table.bots),
            "requested_by": state.table.requested_by,
            "rated": state.table.rated,
            "timeouts": list(state.timeouts),
            "away": list(state.away),
            "commands": {cid: [c.first, c.last, c.seat, c.digest] for cid, c in state.commands.items()},
            "engine_command": state.engine_command,
            "seeds": [seed.hex() for seed in state.seeds],
            "bank_ms": state.table.time_bank_ms,
            "grace_ends": list(state.grace_ends),
            "forfeit_after": list(state.forfeit_after),
            "auto_turns": list(state.auto_turns),
            "bank_used": list(state.bank_used),
        }
        return json.dumps(data).encode()

    def loads(self, data: bytes) -> EngineState | None:
        raw = json.loads(data)
        return EngineState(
            game=serialize.from_dict(raw["game"]),
            table=Table(
                tuple(raw["players"]),
                int(raw["turn_ms"]),
                tuple(raw["names"]),
                tuple(raw["bots"]),
                str(raw["requested_by"]),
                bool(raw["rated"]),
                int(raw["bank_ms"]),
            ),
            timeouts=tuple(raw["timeouts"]),
            away=tuple(raw["away"]),
            commands={
                cid: Sent(int(a), int(b), int(seat), str(d))
                for cid, (a, b, seat, d) in raw["commands"].items()
            },
            engine_command=raw["engine_command"],
            seeds=tuple(bytes.fromhex(seed) for seed in raw["seeds"]),
            grace_ends=tuple(raw["grace_ends"]),
            forfeit_after=tuple(raw["forfeit_after"]),
            auto_turns=tuple(raw["auto_turns"]),
            bank_used=tuple(raw["bank_used"]),
        )


def _fact(state: EngineState, command_id: str, fact: Fact) -> EngineState:
    if isinstance(fact, TableSeated):
        seats = len(fact.player_ids)
        table = Table(
            fact.player_ids,
            fact.turn_timeout_ms,
            fact.player_names,
            fact.bots,
            fact.requested_by,
            fact.rated,
            fact.time_bank_ms,
        )
        zeros = (0,) * seats
        return replace(
            state,
            table=table,
            timeouts=zeros,
            away=(False,) * seats,
            seeds=(b"",) * seats,
            grace_ends=zeros,
            forfeit_after=zeros,
            auto_turns=zeros,
            bank_used=zeros,
        )
    if isinstance(fact, TurnTimedOut):
        timeouts = _with(state.timeouts, fact.seat, fact.in_a_row)
        auto = state.auto_turns
        if state.grace_ends[fact.seat]:  # played for a disconnected seat: counts toward its forfeit
            auto = _with(auto, fact.seat, auto[fact.seat] + 1)
        return replace(state, timeouts=timeouts, engine_command=command_id, auto_turns=auto)
    if isinstance(fact, SeatDisconnected):
        return replace(
            state,
            grace_ends=_with(state.grace_ends, fact.seat, fact.grace_ends_at_ms),
            forfeit_after=_with(state.forfeit_after, fact.seat, fact.forfeit_after_turns),
            auto_turns=_with(state.auto_turns, fact.seat, 0),
        )
    if isinstance(fact, SeatReconnected):
        return replace(
            state,
            grace_ends=_with(state.grace_ends, fact.seat, 0),
            auto_turns=_with(state.auto_turns, fact.seat, 0),
        )
    if isinstance(fact, TimeBankUsed):
        used = state.bank_used[fact.seat] + fact.used_ms
        return replace(state, bank_used=_with(state.bank_used, fact.seat, used))
    if isinstance(fact, SeedContributed):
        return replace(state, seeds=_with(state.seeds, fact.seat, fact.seed))
    if isinstance(fact, PlayerAway):
        return replace(state, away=_with(state.away, fact.seat, True))
    return replace(
        state, away=_with(state.away, fact.seat, False), timeouts=_with(state.timeouts, fact.seat, 0)
    )
