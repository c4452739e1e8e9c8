"""The matchmaking core: tickets, the pairing loop, TableFormed publishing, tournaments, ratings.

All state lives on the event loop (the consumer threads hand records and partition moves over with
`call_soon_threadsafe`). The state is split by the partitions of matchmaking's topic (`routing.py`):
an instance serves the queues, tickets and tournaments of the partitions it owns (`owned`; all of them
on the embedded log), each written to its partition before a caller is answered (`journal.py`). An
instance taking a partition folds its journal (`adopt`); one losing it drops that state (`drop`).
Ratings come from scoring's topic, which every instance reads from the beginning (scoring is the
source of ratings, never the client). A table's game id is derived from its tickets, so a retried
publish is the same TableFormed and the engine's idempotent create makes one game.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import random
import re
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from google.protobuf.message import DecodeError
from rummy.game.v1 import events_pb2 as ev
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy_contracts.wire import option_from_pb, option_to_pb
from rummy_rules.errors import RuleViolation
from rummy_rules.variants import rules_for
from rummy_service import auth
from rummy_service.auth import Principal
from rummy_service.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    Unavailable,
    quote,
)
from rummy_service.forwarding import NOT_OWNER
from rummy_store import EventLog, EventRecord, StoreError
from rummy_store.partitioning import partition_for

from rummy_matchmaking import journal, telemetry
from rummy_matchmaking import private_tables as private
from rummy_matchmaking.journal import Call, Journal
from rummy_matchmaking.pairing import FormedTable, PairingRules, Ticket, form_tables
from rummy_matchmaking.private_tables import PrivateTable
from rummy_matchmaking.routing import new_id, queue_partition, table_game_id
from rummy_matchmaking.tournaments import (
    CONTRACT_ROUNDS,
    ROTATION,
    SERIES,
    Table,
    Tournament,
    TournamentError,
)

log = logging.getLogger("rummy_matchmaking")
Option = int | bool | str


@dataclass(slots=True)
class TicketStatus:
    ticket: Ticket
    owner: str
    state: int = mm.TICKET_STATE_QUEUED
    game_id: str = ""
    seats: dict[str, int] = field(default_factory=dict)
    version: int = 0
    moved: bool = False  # its partition went to another instance: watchers follow it there


def _moved(status: TicketStatus, seen: int) -> bool:
    return status.version != seen


def not_owner(partition: int, what: str) -> Unavailable:
    return Unavailable(NOT_OWNER, f"partition {partition} of {what} is not served by this instance")


def option_value(value: ev.OptionValue) -> Option:
    result = option_from_pb(value)
    if result is None:
        raise InvalidArgument("bad_option", "an option needs a value")
    return result


def table_event(
    game_id: str, variant: str, players: Sequence[str], options: Mapping[str, Option], **extra: object
) -> mm.MatchmakingEvent:
    table = mm.TableFormed(game_id=game_id, variant=variant, player_ids=players, **extra)  # type: ignore[arg-type]
    for name, value in options.items():
        table.options[name].CopyFrom(option_to_pb(value))
    return mm.MatchmakingEvent(game_id=game_id, table_formed=table)


class MatchmakingApp:
    """Every public coroutine is called on the service's event loop with an authenticated caller."""

    def __init__(
        self,
        journal_log: EventLog,
        pairing: Mapping[str, PairingRules] | None = None,
        options: Mapping[str, Mapping[str, Option]] | None = None,
        *,
        clock: Callable[[], float] = time.time,  # wall time: enqueue times outlive the process
        turn_timeout_ms: int = 0,
        humans_only: frozenset[str] = frozenset(),
        invite_ttl_s: float = private.INVITE_TTL_S,
        keep_s: float = private.KEEP_S,
    ) -> None:
        self._log = journal_log
        self.partitions = journal_log.partitions
        self.owned: set[int] = set()  # partitions whose state is here and which this instance writes
        # Asked before answering NOT_FOUND in an owned partition (PartitionOwnership.claimed_elsewhere):
        # another instance may have claimed it before this one heard it moved.
        self.claimed_elsewhere: Callable[[int], bool] = lambda partition: False
        self._pairing = dict(pairing or {})
        self._options = {variant: dict(o) for variant, o in (options or {}).items()}
        self._clock = clock
        self._turn_timeout_ms = turn_timeout_ms  # for queue tables; 0 = the engine's default
        self._humans_only = humans_only  # variants whose casual queues take no bot either ("*": all)
        self.tickets: dict[str, TicketStatus] = {}
        self._queued: dict[str, str] = {}  # player -> their queued ticket: nobody waits (or sits) twice
        self.ratings: dict[tuple[str, str], tuple[int, float]] = {}  # (variant, player) -> games, ordinal
        self.skipped = 0  # scoring records that did not parse
        self.tournaments: dict[str, Tournament] = {}
        self._seqs: dict[str, int] = {}  # tournament id -> the last seq written under it
        self._formed: set[str] = set()  # tournament tables published (a replayed round is not re-sent)
        # Results of tournament games, kept by every instance: one taking a tournament's partition
        # replays them to find its later rounds (they passed before it owned the tournament).
        self._results: dict[str, sc.MatchScored] = {}
        self._unpublished: list[tuple[Tournament, list[Table]]] = []  # rounds to publish again
        # Changes decided on the state and then written (pairing, cancel, tournaments, partition moves)
        # run one at a time, so nothing can change the state between the decision and its write.
        self._writing = asyncio.Lock()
        self._changed = asyncio.Condition()
        self.tables_formed = 0
        self.private: dict[str, PrivateTable] = {}  # private tables of the partitions owned
        self._codes: dict[str, str] = {}  # short code -> its table id
        self._over: OrderedDict[str, None] = OrderedDict()  # private games scoring has finished
        self._invite_ttl_s = invite_ttl_s
        self._keep_s = keep_s

    def partition_of(self, key: str) -> int:
        """The partition of a ticket or tournament id (where its records are)."""
        return partition_for(key, self.partitions)

    def queue_partition(self, variant: str, private_code: str, casual: bool = False) -> int:
        return queue_partition(variant, private_code, self.partitions, casual)

    def _check_owned(self, partition: int, what: str) -> None:
        if partition not in self.owned:
            raise not_owner(partition, what)

    def _check_found(self, partition: int, what: str) -> None:
        """Before saying `what` does not exist: is its partition still this instance's?"""
        self._check_owned(partition, what)
        if self.claimed_elsewhere(partition):
            raise not_owner(partition, what)

    async def _write(self, *calls: Call) -> list[bool]:
        """Append the calls (Kafka: one transaction per partition); which of them were written. Every
        call failing raises UNAVAILABLE: the log is away, or the partition moved (nothing was written)."""
        answers = await asyncio.to_thread(self._log.append_batch, [journal.append_of(c) for c in calls])
        written = [not isinstance(a, Exception) for a in answers]
        for answer in answers:
            if isinstance(answer, StoreError):
                log.warning("journal write failed: %s", answer)
            elif isinstance(answer, Exception):
                raise answer
        if not any(written):
            raise Unavailable("journal_unavailable", "the journal could not be written: retry")
        return written

    # --- ratings and results (from scoring's topic) -------------------------------------------------

    def rating(self, variant: str, player: str) -> tuple[int, float]:
        return self.ratings.get((variant, player), (0, 0.0))

    def on_scoring_record(self, record: EventRecord) -> None:
        """Apply a scoring event (on the loop): a rating change, or a tournament game's result. A record
        that does not parse is reported and skipped: it must not stop the ratings behind it."""
        try:
            event = sc.ScoringEvent.FromString(record.payload)
        except DecodeError:
            self.skipped += 1
            p = record.position
            log.warning(
                "skipped scoring record %d@%d (key %.40r): it does not parse",
                p.partition,
                p.offset,
                record.game_id,
            )
            return
        case = event.WhichOneof("event")
        if case == "rating_changed":
            change = event.rating_changed
            key = (change.variant, change.player_id)
            if change.games >= self.rating(*key)[0]:  # partitions interleave: the latest game wins
                self.ratings[key] = (change.games, change.ordinal)
        elif case == "match_scored":
            if event.game_id.startswith(private.PREFIX):
                self._over[event.game_id] = None
                while len(self._over) > private.GAMES_REMEMBERED:
                    self._over.popitem(last=False)
            if event.game_id.startswith(TOURNAMENT_PREFIX):
                self._results.setdefault(event.game_id, event.match_scored)
            for tournament in self.tournaments.values():
                new = tournament.record(event.game_id, event.match_scored)
                if new:
                    asyncio.get_running_loop().create_task(self._next_round(tournament, new))

    # --- tickets -------------------------------------------------------------------------------------

    def new_ticket_id(self, variant: str, private_code: str, casual: bool = False) -> str:
        """A ticket id of this queue's partition (chosen by the instance a call reaches first, so a
        forwarded enqueue retried at the queue's next owner is recognised)."""
        return new_id("", self.queue_partition(variant, private_code, casual), self.partitions)

    async def enqueue(
        self, caller: Principal, request: mm.EnqueueRequest, ticket_id: str = ""
    ) -> TicketStatus:
        """Queue a ticket; `ticket_id` (from `new_ticket_id`) makes a retried call answer the same one.

        Only the caller is queued (a party would seat people who did not ask); rated queues take
        people with an account only, so a guest or a bot plays casual games."""
        auth.require(caller, auth.PLAY, auth.BOT_PLAY)
        if request.party:
            raise FailedPrecondition(
                "party_needs_consent",
                "a ticket queues its caller only: friends who want one table queue with one private code",
            )
        casual = request.casual or bool(request.private_code)
        if caller.kind == auth.BOT and ({"*", request.variant} & self._humans_only):
            raise FailedPrecondition("humans_only", f"{quote(request.variant)} queues are for people only")
        if not casual and not caller.rated:
            raise FailedPrecondition(
                "account_required",
                "rated games are for people with an account: sign up, or queue for a casual game",
            )
        players = (caller.subject,)
        low = request.min_players
        high = request.max_players or low
        try:
            rules_for(request.variant, max(low, 2))
            rules_for(request.variant, max(high, 2))
        except RuleViolation as exc:
            raise InvalidArgument(exc.code, exc.message) from None
        if low < 2 or high < low:
            raise InvalidArgument("bad_table_size", "table size: 2 <= min_players <= max_players")
        if len(set(players)) != len(players) or any(not p for p in players):
            raise InvalidArgument("bad_party", "a party lists distinct players, the caller not included")
        if len(players) > high:
            raise InvalidArgument("party_too_big", f"a party of {len(players)} does not fit {high} seats")
        partition = self.queue_partition(request.variant, request.private_code, casual)
        self._check_owned(partition, "this queue")
        if ticket_id and (not _TICKET_ID.fullmatch(ticket_id) or self.partition_of(ticket_id) != partition):
            raise InvalidArgument("bad_ticket_id", "not a ticket id of this queue")
        retried = self.tickets.get(ticket_id)
        if retried is not None:
            if retried.owner != caller.subject or retried.ticket.variant != request.variant:
                raise FailedPrecondition("ticket_id_taken", "that ticket id is another ticket's")
            return retried
        busy = [p for p in players if p in self._queued]
        if busy:
            raise FailedPrecondition("already_queued", f"already in the queue: {', '.join(map(quote, busy))}")
        rating = sum(self.rating(request.variant, p)[1] for p in players) / len(players)
        ticket = Ticket(
            ticket_id or new_id("", partition, self.partitions),
            request.variant,
            players,
            rating,
            low,
            high,
            self._clock(),
            request.private_code,
            (caller.name,),
            (caller.kind == auth.BOT,),
            casual,
        )
        for player in players:  # held while the ticket is written: a second enqueue is refused
            self._queued[player] = ticket.ticket_id
        status = TicketStatus(ticket, caller.subject)
        try:
            await self._write(journal.ticket_queued(ticket, caller.subject))
        except BaseException:
            self._release(status)
            raise
        if partition in self.owned:  # else it moved meanwhile: its new owner folds the ticket
            self.tickets[ticket.ticket_id] = status
        else:
            self._release(status)
        return status

    def _owned(self, caller: Principal, ticket_id: str) -> TicketStatus:
        status = self.tickets.get(ticket_id)
        if status is None:
            self._check_found(self.partition_of(ticket_id), f"ticket {quote(ticket_id)}")
            raise NotFound("no_such_ticket", f"no ticket {quote(ticket_id)}")
        if caller.subject not in status.ticket.players and not caller.is_operator:
            raise PermissionDenied("not_your_ticket", "only the ticket's players may see or cancel it")
        return status

    async def cancel(self, caller: Principal, ticket_id: str) -> TicketStatus:
        status = self._owned(caller, ticket_id)
        async with self._writing:  # not while a pairing round is writing this ticket's table
            if status.moved:
                raise not_owner(self.partition_of(ticket_id), f"ticket {quote(ticket_id)}")
            if status.state == mm.TICKET_STATE_SEATED:
                raise FailedPrecondition(
                    "already_seated", f"ticket {ticket_id} is seated in {status.game_id}"
                )
            if status.state == mm.TICKET_STATE_QUEUED:
                await self._write(journal.ticket_cancelled(ticket_id))
                status.state = mm.TICKET_STATE_CANCELLED
                self._release(status)
                await self._notify(status)
        return status

    def _release(self, status: TicketStatus) -> None:
        for player in status.ticket.players:
            if self._queued.get(player) == status.ticket.ticket_id:
                del self._queued[player]

    async def _notify(self, status: TicketStatus) -> None:
        status.version += 1
        async with self._changed:
            self._changed.notify_all()

    async def watch(self, caller: Principal, ticket_id: str) -> AsyncIterator[TicketStatus]:
        """The ticket now and after every change, until seated or cancelled; UNAVAILABLE `not_owner`
        once its partition moves to another instance (where the stream goes on)."""
        status = self._owned(caller, ticket_id)
        seen = -1
        while True:
            if status.moved:
                raise not_owner(self.partition_of(ticket_id), f"ticket {quote(ticket_id)}")
            if status.version != seen:
                # Read the state before yielding: the ticket may change while the consumer holds the
                # item, and a state checked after resuming would end the stream without sending it.
                seen, state = status.version, status.state
                yield status
                if state != mm.TICKET_STATE_QUEUED:
                    return
            async with self._changed:
                await self._changed.wait_for(functools.partial(_moved, status, seen))

    def waited(self, status: TicketStatus) -> float:
        return self._clock() - status.ticket.enqueued_at

    # --- pairing -------------------------------------------------------------------------------------

    async def pair_once(self) -> int:
        """Form every table the queues allow now and publish them (and drop expired private tables);
        returns the tables formed."""
        async with self._writing:
            self.drop_expired()
            return await self._pair()

    async def _pair(self) -> int:
        """Each partition's tickets are paired alone: a queue is in one partition, and a table's
        TableFormed is written to its tickets' partition."""
        retry, self._unpublished = self._unpublished, []
        for tournament, tables in retry:
            if self.tournaments.get(tournament.tournament_id) is tournament:  # else it moved
                await self._publish_or_keep(tournament, tables)
        queues: dict[int, list[Ticket]] = {}
        for status in self.tickets.values():
            if status.state == mm.TICKET_STATE_QUEUED:
                queues.setdefault(self.partition_of(status.ticket.ticket_id), []).append(status.ticket)
        now = self._clock()
        telemetry.queues(t.variant for tickets in queues.values() for t in tickets)
        formed = [
            (table_game_id([t.ticket_id for t in table.tickets], partition, self.partitions), table)
            for partition, tickets in queues.items()
            for table in form_tables(tickets, now, self._pairing)
        ]
        if not formed:
            return 0
        written = await self._write(*(journal.table_formed(self._table_event(g, t)) for g, t in formed))
        seated = [(game_id, table) for (game_id, table), ok in zip(formed, written, strict=True) if ok]
        for game_id, table in seated:
            for ticket in table.tickets:
                self._seat(self.tickets[ticket.ticket_id], game_id, table.players)
            waits = [now - ticket.enqueued_at for ticket in table.tickets]
            telemetry.table_formed(game_id, table.tickets[0].variant, table.players, waits)
        self.tables_formed += len(seated)
        async with self._changed:
            self._changed.notify_all()
        return len(seated)

    def _seat(self, status: TicketStatus, game_id: str, players: Sequence[str]) -> None:
        status.state, status.game_id = mm.TICKET_STATE_SEATED, game_id
        status.seats = {p: list(players).index(p) for p in status.ticket.players}
        self._release(status)
        status.version += 1

    def _table_event(self, game_id: str, table: FormedTable) -> mm.MatchmakingEvent:
        variant = table.tickets[0].variant
        return table_event(
            game_id,
            variant,
            table.players,
            self._options.get(variant, {}),
            ticket_ids=[t.ticket_id for t in table.tickets],
            turn_timeout_ms=self._turn_timeout_ms,
            player_names=table.names,
            bots=table.bots,
            rated=table.rated,
        )

    async def run_pairing(self, interval_s: float, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await self.pair_once()
            except Exception:
                log.exception("pairing failed; the tickets stay queued and are retried")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), interval_s)

    # --- tournaments ---------------------------------------------------------------------------------

    async def create_tournament(
        self, request: mm.CreateTournamentRequest, partition: int | None = None
    ) -> Tournament:
        """A new tournament in `partition` (by default one this instance owns, at random)."""
        if request.format not in (SERIES, ROTATION):
            raise InvalidArgument("bad_format", "format is SERIES or ROTATION")
        if request.rounds < 1:
            raise InvalidArgument("bad_rounds", "a tournament has at least one round")
        if request.format == ROTATION and request.rounds > CONTRACT_ROUNDS:
            raise InvalidArgument(
                "bad_rounds", f"a rotation plays contracts 1-{CONTRACT_ROUNDS} (contract §3.4)"
            )
        options = {name: option_value(value) for name, value in request.options.items()}
        try:
            rules_for(request.variant, max(request.table_size, 3), **options)
        except RuleViolation as exc:
            raise InvalidArgument(exc.code, exc.message) from None
        if partition is None:
            if not self.owned:
                raise Unavailable(NOT_OWNER, "this instance serves no partition yet: retry")
            partition = random.choice(sorted(self.owned))
        self._check_owned(partition, "a new tournament")
        created = mm.TournamentCreated(
            tournament_id=new_id(TOURNAMENT_PREFIX, partition, self.partitions, hex_digits=12),
            variant=request.variant,
            format=request.format,
            rounds=request.rounds,
            table_size=request.table_size,
            options=request.options,
            seed=request.seed or uuid.uuid4().bytes,
        )
        async with self._writing:
            self._check_owned(partition, "a new tournament")
            await self._write(journal.tournament_created(created))
            tournament = _tournament(created)
            self.tournaments[tournament.tournament_id] = tournament
            self._seqs[tournament.tournament_id] = 1
        return tournament

    def tournament(self, tournament_id: str) -> Tournament:
        tournament = self.tournaments.get(tournament_id)
        if tournament is None:
            self._check_found(self.partition_of(tournament_id), f"tournament {quote(tournament_id)}")
            raise NotFound("no_such_tournament", f"no tournament {quote(tournament_id)}")
        return tournament

    def _still(self, tournament_id: str) -> Tournament:
        """The tournament, checked again after waiting for the lock (its partition may have moved)."""
        tournament = self.tournaments.get(tournament_id)
        if tournament is None:
            raise not_owner(self.partition_of(tournament_id), f"tournament {quote(tournament_id)}")
        return tournament

    async def register(self, caller: Principal, tournament_id: str) -> int:
        """Register the caller (a person with an account: tournaments are rated)."""
        auth.require(caller, auth.PLAY)
        if not caller.rated:
            raise FailedPrecondition(
                "account_required", "tournaments are for people with an account: sign up"
            )
        self.tournament(tournament_id)
        async with self._writing:
            tournament = self._still(tournament_id)
            try:
                tournament.check_register(caller.subject)
            except TournamentError as exc:
                raise FailedPrecondition(exc.code, exc.message) from None
            seq = self._seqs[tournament_id] + 1
            await self._write(journal.tournament_registered(tournament_id, caller.subject, caller.name, seq))
            self._seqs[tournament_id] = seq
            return tournament.register(caller.subject, caller.name)

    async def start_tournament(self, tournament_id: str) -> list[Table]:
        self.tournament(tournament_id)
        async with self._writing:
            tournament = self._still(tournament_id)
            try:
                tournament.first_seating()
            except TournamentError as exc:
                raise FailedPrecondition(exc.code, exc.message) from None
            seq = self._seqs[tournament_id] + 1
            await self._write(journal.tournament_started(tournament_id, seq))
            self._seqs[tournament_id] = seq
            tables = tournament.start()
            await self._publish_round(tournament, tables)
        return tables

    async def _next_round(self, tournament: Tournament, tables: Sequence[Table]) -> None:
        async with self._writing:
            if self.tournaments.get(tournament.tournament_id) is not tournament:
                return  # moved: its new owner derives the round from the same results
            await self._publish_or_keep(tournament, list(tables))

    async def _publish_or_keep(self, tournament: Tournament, tables: list[Table]) -> None:
        """Publish, or keep the tables for the pairing loop to publish again (the caller holds
        `_writing`)."""
        try:
            await self._publish_round(tournament, tables)
        except Exception:
            log.exception("tournament %s: publishing a round failed; retried", tournament.tournament_id)
            self._unpublished.append((tournament, tables))

    async def _publish_round(self, tournament: Tournament, tables: Sequence[Table]) -> None:
        """Publish a round's tables under the tournament's id, except those already on the topic (a
        round re-derived by a new owner). The caller holds `_writing`."""
        events = [
            table_event(
                t.game_id,
                tournament.variant,
                t.players,
                tournament.options_for(t),
                tournament_id=tournament.tournament_id,
                tournament_round=t.round,
                table_number=t.number,
                player_names=[tournament.names.get(p, "") for p in t.players],
                rated=True,
            )
            for t in tables
            if t.game_id not in self._formed
        ]
        if not events:
            return
        tid = tournament.tournament_id
        await self._write(journal.tournament_tables(tid, self._seqs[tid] + 1, events))
        self._seqs[tid] += len(events)
        self._formed.update(event.game_id for event in events)
        for event in events:
            table = event.table_formed
            telemetry.tournament_table(
                table.game_id, table.variant, table.player_ids, tid, table.tournament_round
            )
        self.tables_formed += len(events)

    # --- private tables ------------------------------------------------------------------------------

    async def create_private_table(
        self, caller: Principal, request: mm.CreatePrivateTableRequest, partition: int
    ) -> PrivateTable:
        """A table hosted by the caller (seated first) in `partition`, with a fresh link token."""
        auth.require(caller, auth.PLAY, auth.BOT_PLAY)
        options = {name: option_value(value) for name, value in request.options.items()}
        try:
            rules_for(request.variant, request.seats, **options)
        except RuleViolation as exc:
            raise InvalidArgument(exc.code, exc.message) from None
        turn = request.turn_timeout_ms
        if turn and not private.MIN_TURN_MS <= turn <= private.MAX_TURN_MS:
            raise InvalidArgument(
                "bad_clock", f"turn_timeout_ms is 0 or {private.MIN_TURN_MS}-{private.MAX_TURN_MS}"
            )
        bank = request.time_bank_ms
        if bank and not private.MIN_BANK_MS <= bank <= private.MAX_BANK_MS:
            raise InvalidArgument(
                "bad_clock", f"time_bank_ms is 0 or {private.MIN_BANK_MS}-{private.MAX_BANK_MS}"
            )
        async with self._writing:
            self._check_owned(partition, "a new private table")
            created = mm.PrivateTableCreated(
                table_id=private.new_table_id(partition, self.partitions),
                host=caller.subject,
                host_name=caller.name,
                host_bot=caller.kind == auth.BOT,
                variant=request.variant,
                seats=request.seats,
                options=request.options,
                turn_timeout_ms=turn,
                expires_at=self._clock() + self._invite_ttl_s,
                short_code=private.new_code(partition, self.partitions, self._codes)
                if request.short_code
                else "",
            )
            if request.HasField("time_bank_ms"):  # unset: the engine's default
                created.time_bank_ms = bank
            await self._write(journal.private_table_created(created))
            return self._open(created)

    def _open(self, created: mm.PrivateTableCreated) -> PrivateTable:
        table = PrivateTable(created, expires_at=created.expires_at)
        table.players.append(private.Player(created.host, created.host_name, created.host_bot))
        self.private[created.table_id] = table
        if created.short_code:
            self._codes[created.short_code] = created.table_id
        return table

    def private_table(self, table_id: str) -> PrivateTable:
        """The table of a link token (NOT_FOUND `no_such_table`: a wrong token, or an expired invite)."""
        table = self.private.get(table_id)
        if table is None or table.expires_at <= self._clock():
            self._check_found(self.partition_of(table_id), "this private table")
            raise NotFound("no_such_table", "no private table has this link (or its invite expired)")
        return table

    def table_of_code(self, code: str) -> PrivateTable:
        """The table of a short code (NOT_FOUND `no_such_code`)."""
        table_id = self._codes.get(code.upper())
        if table_id is None:
            self._check_found(self.partition_of(private.code_key(code)), "this short code")
            raise NotFound("no_such_code", "no private table has this code (or its invite expired)")
        return self.private_table(table_id)

    def game_over(self, table: PrivateTable) -> bool:
        return table.game_id in self._over

    async def join_private(self, caller: Principal, table_id: str, code: str) -> PrivateTable:
        """Seat the caller (by the link of a table without a code), or ask the host for a seat."""
        auth.require(caller, auth.PLAY, auth.BOT_PLAY)
        async with self._writing:  # each change decided and written before the next is looked at
            table = self.private_table(table_id) if table_id else self.table_of_code(code)
            if table.seat_of(caller.subject) >= 0:
                return table  # back at their seat (leave and return)
            table.check_join(caller.subject)
            asks = bool(table.created.short_code)
            if asks and any(p.player_id == caller.subject for p in table.asking):
                return table
            if asks and len(table.asking) >= private.MAX_ASKING:
                raise FailedPrecondition("too_many_asking", "the host has many requests to answer: try later")
            kind = mm.PRIVATE_CHANGE_ASKED if asks else mm.PRIVATE_CHANGE_JOINED
            who = private.Player(caller.subject, caller.name, caller.kind == auth.BOT)
            return await self._change(table, kind, who)

    async def approve_private(self, caller: Principal, table_id: str, player: str) -> PrivateTable:
        async with self._writing:
            table = self.private_table(table_id)
            if caller.subject != table.host:
                raise PermissionDenied("not_host", "only the table's host may do this")
            asking = next((p for p in table.asking if p.player_id == player), None)
            if asking is None:
                raise NotFound("no_such_player", "that player has not asked for a seat")
            table.check_join(player)
            return await self._change(table, mm.PRIVATE_CHANGE_JOINED, asking)

    async def remove_private(self, caller: Principal, table_id: str, player: str) -> PrivateTable:
        async with self._writing:
            table = self.private_table(table_id)
            table.check_change(caller.subject, player)
            gone = private.Player(player, "", False)
            return await self._change(
                table, mm.PRIVATE_CHANGE_REMOVED, gone, by_host=caller.subject != player
            )

    async def accept_rematch(self, caller: Principal, table_id: str) -> PrivateTable:
        """The caller accepts a rematch of the table's finished game; the last acceptance starts it."""
        async with self._writing:
            table = self.private_table(table_id)
            seat = table.seat_of(caller.subject)
            if seat < 0:
                raise PermissionDenied("not_seated", "only the table's players may accept a rematch")
            if not self.game_over(table):
                raise FailedPrecondition("game_not_over", "a rematch is offered once the game is over")
            if table.players[seat].rematch:
                return table
            return await self._change(table, mm.PRIVATE_CHANGE_REMATCH, table.players[seat])

    async def _change(
        self, table: PrivateTable, kind: int, who: private.Player, by_host: bool = False
    ) -> PrivateTable:
        """Write a change (with the game it starts) and apply it; the caller holds `_writing` and
        checked the change on the table as it is now."""
        change = mm.PrivateTableChanged(
            table_id=table.table_id,
            change=kind,  # type: ignore[arg-type]
            player_id=who.player_id,
            player_name=who.name,
            bot=who.bot,
            by_host=by_host,
            at=self._clock(),
        )
        trial = PrivateTable(table.created)  # the change applied to a copy decides the game
        trial.players = [private.Player(p.player_id, p.name, p.bot, p.rematch) for p in table.players]
        trial.games = table.games
        game = None
        if trial.apply(change, self._keep_s):
            game = self._private_game(table, trial.games, [p for p in trial.players])
        await self._write(journal.private_table_changed(change, table.seq + 1, game))
        table.seq += 1 + (game is not None)
        if table.apply(change, self._keep_s) and game is not None:
            table.game_id = game.table_formed.game_id
            self.tables_formed += 1
            players = game.table_formed.player_ids
            telemetry.private_table(table.game_id, table.created.variant, players)
        return table

    def _private_game(
        self, table: PrivateTable, number: int, players: Sequence[private.Player]
    ) -> mm.MatchmakingEvent:
        created = table.created
        game_id = private.game_id(table.table_id, number, self.partitions)
        bank = {"time_bank_ms": created.time_bank_ms} if created.HasField("time_bank_ms") else {}
        return table_event(
            game_id,
            created.variant,
            [p.player_id for p in players],
            {name: option_value(value) for name, value in created.options.items()},
            turn_timeout_ms=created.turn_timeout_ms,
            player_names=[p.name for p in players],
            bots=[p.bot for p in players],
            rated=False,
            **bank,
        )

    def drop_expired(self) -> int:
        """Drop the tables past their time (expired invites, long-finished tables); how many."""
        now = self._clock()
        gone = [t for t in self.private.values() if t.expires_at <= now]
        for table in gone:
            self._forget(table)
        return len(gone)

    def _forget(self, table: PrivateTable) -> None:
        del self.private[table.table_id]
        self._codes.pop(table.created.short_code, None)

    # --- partitions moving between instances ---------------------------------------------------------

    async def adopt(self, partitions: Iterable[int], folded: Journal) -> None:
        """Serve `partitions` from their folded journal (`journal.read_journal`, read after this
        instance claimed them): tickets come back queued, cancelled or seated at the table their
        TableFormed names; a started tournament re-draws its first round from its seed and replays
        the results seen so far for the later ones, publishing any table not on the topic yet."""
        async with self._writing:
            self._formed |= folded.tournament_games
            for ticket, owner in sorted(folded.tickets.values(), key=lambda item: item[0].enqueued_at):
                status = TicketStatus(ticket, owner)
                self.tickets[ticket.ticket_id] = status
                table = folded.seated.get(ticket.ticket_id)
                if table is not None:
                    self._seat(status, table.game_id, table.player_ids)
                elif ticket.ticket_id in folded.cancelled:
                    status.state = mm.TICKET_STATE_CANCELLED
                else:
                    for player in ticket.players:
                        self._queued[player] = ticket.ticket_id
            rounds = []
            for tournament_id, created in folded.tournaments.items():
                tournament = _tournament(created)
                for player, name in folded.registered.get(tournament_id, []):
                    tournament.register(player, name)
                self.tournaments[tournament_id] = tournament
                self._seqs[tournament_id] = folded.heads.get(tournament_id, 1)
                if tournament_id in folded.started:
                    rounds.append((tournament, tournament.start() + self._replay(tournament)))
            now = self._clock()
            for table_id, invite in folded.private_tables.items():
                private_table = self._open(invite)
                for change in folded.private_changes[table_id]:
                    private_table.apply(change, self._keep_s)
                private_table.seq = folded.heads.get(table_id, 1)
                private_table.game_id = folded.private_games.get(table_id, "")
                if private_table.expires_at <= now:
                    self._forget(private_table)
            self.owned |= set(partitions)
            for tournament, tables in rounds:
                for number in sorted({t.round for t in tables}):
                    await self._publish_or_keep(tournament, [t for t in tables if t.round == number])

    def _replay(self, tournament: Tournament) -> list[Table]:
        """The rounds that the results seen so far open, in order."""
        opened: list[Table] = []
        while True:
            new = [t for game_id, m in self._results.items() for t in tournament.record(game_id, m)]
            if not new:
                return opened
            opened += new

    async def drop(self, partitions: Iterable[int]) -> None:
        """Stop serving `partitions` (another instance owns them now): their state goes, and their
        tickets' watchers are told to follow them."""
        gone = set(partitions)
        self.owned -= gone
        async with self._writing:
            for ticket_id in [t for t in self.tickets if self.partition_of(t) in gone]:
                status = self.tickets.pop(ticket_id)
                self._release(status)
                status.moved = True
                status.version += 1
            for table in [t for t in self.private.values() if self.partition_of(t.table_id) in gone]:
                self._forget(table)
            for tournament_id in [t for t in self.tournaments if self.partition_of(t) in gone]:
                del self.tournaments[tournament_id]
                del self._seqs[tournament_id]
                self._formed = {g for g in self._formed if not g.startswith(tournament_id + "-")}
        async with self._changed:
            self._changed.notify_all()


TOURNAMENT_PREFIX = "tour-"
_TICKET_ID = re.compile("[0-9a-f]{32}")


def _tournament(created: mm.TournamentCreated) -> Tournament:
    options = {name: option_value(value) for name, value in created.options.items()}
    return Tournament(
        created.tournament_id,
        created.variant,
        created.format,
        created.rounds,
        created.table_size,
        options,
        created.seed,
    )
