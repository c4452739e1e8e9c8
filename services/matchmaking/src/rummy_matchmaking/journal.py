"""Matchmaking's own state as events on its topic, and the fold that rebuilds it after a restart.

Why the topic and not Redis: matchmaking already owns `rummy.matchmaking.events.v1` (Kafka, or the
embedded sqlite log under `make run`), and the TableFormed there is the fact that seats a ticket.
Writing tickets and tournaments into the same log makes queued, cancelled and seated one history: an
instance taking a partition folds it (queued, minus cancelled, minus seated by a TableFormed), so it
neither loses a ticket nor seats one twice, and there is no second store that could disagree with the
log (nor a Redis the embedded default lacks). Each call is written, acknowledged, before the caller is
answered. Every record of a ticket, its table and a tournament lands in one partition (`routing.py`):
a tournament's tables are written under the tournament's id, after its other records. Tournament
rounds after the first are not decided here: they follow from the results on scoring's topic, which
every instance reads from the beginning.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from google.protobuf.message import DecodeError
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy_service.config import OtherFormat
from rummy_store import EventLog, EventRecord, NewEvent
from rummy_store.records import Append

from rummy_matchmaking.pairing import Ticket

log = logging.getLogger("rummy_matchmaking")

FORMAT: Final = 2
"""The journal's format, in every record's `schema-version` header.

2: tickets and tournaments are journaled, a rotation table plays one contract round (D19), and tables
name games of the engine's event format 2. 1 (the header's default before a format was declared): a
topic written beside a format-1 engine store, whose tables name games a new engine store does not hold
and whose older part journaled no tickets or tournaments; restoring it would seat tickets at missing
games and leave tournaments waiting for their results forever, so it is refused.
"""

Call = tuple[str, str, int, Sequence[NewEvent]]  # a publish: key, command id, first seq, events
KINDS: Final = (
    "table_formed",
    "ticket_queued",
    "ticket_cancelled",
    "tournament_created",
    "tournament_registered",
    "tournament_started",
    "private_table_created",
    "private_table_changed",
)


class OtherJournalFormat(OtherFormat):
    """A journal written by a meldstream of another journal format: start from a new one."""

    def __init__(self, where: str, version: int) -> None:
        super().__init__(
            where,
            version,
            what="matchmaking journal format",
            current=FORMAT,
            lost="tickets and tables",
            remedy="delete the embedded journal's directory (default .local/matchmaking; `meldstream run` "
            "keeps the engine and scoring beside it in .local, delete them too) or choose another with "
            "--data-dir / MATCHMAKING_DATA_DIR; on Kafka, use a new MATCHMAKING_TOPIC (ENGINE_TABLES "
            "under `meldstream run`).",
        )


def _call(key: str, command_id: str, seq: int, event: mm.MatchmakingEvent) -> Call:
    event.game_id = key
    kind = event.WhichOneof("event") or ""
    return key, command_id, seq, [NewEvent(kind, event.SerializeToString(), FORMAT)]


def table_formed(event: mm.MatchmakingEvent) -> Call:
    """A table under its game id; a republished table (after a failed round) is the same game."""
    return _call(event.game_id, "table", 1, event)


def ticket_queued(ticket: Ticket, owner: str) -> Call:
    queued = mm.TicketQueued(
        ticket_id=ticket.ticket_id,
        owner=owner,
        variant=ticket.variant,
        player_ids=ticket.players,
        rating=ticket.rating,
        min_players=ticket.min_players,
        max_players=ticket.max_players,
        enqueued_at=ticket.enqueued_at,
        private_code=ticket.private_code,
        owner_name=ticket.names[0] if ticket.names else "",
        bot=bool(ticket.bots and ticket.bots[0]),
        casual=ticket.casual,
    )
    return _call(ticket.ticket_id, "queued", 1, mm.MatchmakingEvent(ticket_queued=queued))


def ticket_cancelled(ticket_id: str) -> Call:
    cancelled = mm.TicketCancelled(ticket_id=ticket_id)
    return _call(ticket_id, "cancelled", 2, mm.MatchmakingEvent(ticket_cancelled=cancelled))


def tournament_created(created: mm.TournamentCreated) -> Call:
    return _call(created.tournament_id, "created", 1, mm.MatchmakingEvent(tournament_created=created))


def tournament_registered(tournament_id: str, player: str, name: str, seq: int) -> Call:
    event = mm.TournamentRegistered(tournament_id=tournament_id, player_id=player, player_name=name)
    return _call(tournament_id, f"register:{player}", seq, mm.MatchmakingEvent(tournament_registered=event))


def tournament_started(tournament_id: str, seq: int) -> Call:
    event = mm.TournamentStarted(tournament_id=tournament_id)
    return _call(tournament_id, "started", seq, mm.MatchmakingEvent(tournament_started=event))


def tournament_tables(tournament_id: str, seq: int, tables: Sequence[mm.MatchmakingEvent]) -> Call:
    """A round's tables in one append under the tournament's id (its partition), from `seq` on; the
    command id names the games, so a retried round is recognised."""
    games = ",".join(t.game_id for t in tables)
    command_id = "tables:" + hashlib.sha256(games.encode()).hexdigest()[:24]
    events = []
    for table in tables:
        envelope = mm.MatchmakingEvent()
        envelope.CopyFrom(table)
        envelope.game_id = tournament_id
        events.append(NewEvent("table_formed", envelope.SerializeToString(), FORMAT))
    return tournament_id, command_id, seq, events


def private_table_created(created: mm.PrivateTableCreated) -> Call:
    return _call(created.table_id, "created", 1, mm.MatchmakingEvent(private_table_created=created))


def private_table_changed(
    change: mm.PrivateTableChanged, seq: int, game: mm.MatchmakingEvent | None = None
) -> Call:
    """A change at a private table from `seq` on, with the TableFormed it starts (one append: the
    game is formed exactly when the change that fills the table is written)."""
    key = change.table_id
    command_id = f"{mm.PrivateChange.Name(change.change)}:{change.player_id}:{seq}"
    events = [
        NewEvent(
            "private_table_changed", _payload(key, mm.MatchmakingEvent(private_table_changed=change)), FORMAT
        )
    ]
    if game is not None:
        events.append(NewEvent("table_formed", _payload(key, game), FORMAT))
    return key, command_id, seq, events


def _payload(key: str, event: mm.MatchmakingEvent) -> bytes:
    envelope = mm.MatchmakingEvent()
    envelope.CopyFrom(event)
    envelope.game_id = key
    return envelope.SerializeToString()


def append_of(call: Call) -> Append:
    """A call as the log's append: its first seq follows the key's last."""
    key, command_id, first_seq, events = call
    return Append(key, command_id, first_seq - 1, events)


@dataclass(slots=True)
class Journal:
    """The folded topic: every ticket with its end (cancelled or seated) and every tournament."""

    tickets: dict[str, tuple[Ticket, str]] = field(default_factory=dict)  # id -> ticket, owner
    cancelled: set[str] = field(default_factory=set)
    seated: dict[str, mm.TableFormed] = field(default_factory=dict)  # ticket id -> its table
    tournaments: dict[str, mm.TournamentCreated] = field(default_factory=dict)
    registered: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # (id, name), in order
    started: set[str] = field(default_factory=set)
    tournament_games: set[str] = field(default_factory=set)  # tournament tables already formed
    private_tables: dict[str, mm.PrivateTableCreated] = field(default_factory=dict)
    private_changes: dict[str, list[mm.PrivateTableChanged]] = field(default_factory=dict)  # in order
    private_games: dict[str, str] = field(default_factory=dict)  # table id -> its latest game
    heads: dict[str, int] = field(default_factory=dict)  # key -> its last seq (where a write continues)
    skipped: int = 0  # records of the topic that were not this journal's (reported once each)

    def apply(self, record: EventRecord) -> None:
        if record.event_type not in KINDS:
            return
        event = _event(record, record.event_type)
        if event is None:
            self.skipped += 1
            return
        self.heads[record.game_id] = max(self.heads.get(record.game_id, 0), record.seq)
        case = event.WhichOneof("event")
        if case == "table_formed":
            table = event.table_formed
            for ticket_id in table.ticket_ids:
                self.seated[ticket_id] = table
            if table.tournament_id:
                self.tournament_games.add(table.game_id)
            if record.game_id in self.private_tables:
                self.private_games[record.game_id] = table.game_id
        elif case == "ticket_queued":
            q = event.ticket_queued
            ticket = Ticket(
                q.ticket_id,
                q.variant,
                tuple(q.player_ids),
                q.rating,
                q.min_players,
                q.max_players,
                q.enqueued_at,
                q.private_code,
                (q.owner_name,),
                (q.bot,),
                q.casual,
            )
            self.tickets[q.ticket_id] = (ticket, q.owner)
        elif case == "ticket_cancelled":
            self.cancelled.add(event.ticket_cancelled.ticket_id)
        elif case == "tournament_created":
            self.tournaments[event.tournament_created.tournament_id] = event.tournament_created
            self.registered.setdefault(event.tournament_created.tournament_id, [])
        elif case == "tournament_registered":
            r = event.tournament_registered
            self.registered.setdefault(r.tournament_id, []).append((r.player_id, r.player_name))
        elif case == "tournament_started":
            self.started.add(event.tournament_started.tournament_id)
        elif case == "private_table_created":
            self.private_tables[record.game_id] = event.private_table_created
            self.private_changes[record.game_id] = []
        elif case == "private_table_changed" and record.game_id in self.private_tables:
            self.private_changes[record.game_id].append(event.private_table_changed)


def _event(record: EventRecord, expected: str) -> mm.MatchmakingEvent | None:
    """The record's event, or None (one log line) for one of another format or that does not parse or
    is not the event its header says: one stray record must not stop matchmaking from starting."""
    try:
        event = mm.MatchmakingEvent.FromString(record.payload)
    except DecodeError:
        event = None
    if record.schema_version != FORMAT or event is None or event.WhichOneof("event") != expected:
        p = record.position
        log.warning(
            "skipped record %d@%d (key %.40r, %s): not a journal event of format %d",
            p.partition,
            p.offset,
            record.game_id,
            expected,
            FORMAT,
        )
        return None
    return event


def fold(records: Iterable[EventRecord]) -> Journal:
    """Partitions interleave freely: nothing here depends on order across keys."""
    journal = Journal()
    for record in records:
        journal.apply(record)
    return journal


def check_format(log: EventLog, where: str) -> None:
    """`OtherJournalFormat`, naming `where`, when the oldest record of a partition has another format
    (an older meldstream's journal, which cannot be continued). Reads one record a partition."""
    for partition in range(log.partitions):
        for record in log.read_partition(partition):
            if record.schema_version != FORMAT:
                raise OtherJournalFormat(where, record.schema_version)
            break


def read_journal(log: EventLog, partitions: Iterable[int]) -> Journal:
    """The given partitions folded as they are now (each to its end)."""
    return fold(record for partition in sorted(partitions) for record in log.read_partition(partition))
