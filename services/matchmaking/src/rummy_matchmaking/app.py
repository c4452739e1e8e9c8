"""The matchmaking core: tickets, the pairing loop, TableFormed publishing, tournaments, ratings.

All state lives on the event loop (the consumer thread hands records over with
`call_soon_threadsafe`). Tickets and tournaments are served from memory and written to matchmaking's
topic before a caller is answered (`journal.py`); a restart folds the topic back (`restore`). Ratings
are rebuilt at start by reading scoring's topic from the beginning (scoring is the source of ratings,
never the client). A table's game id is derived from its tickets, so a retried publish is the same
TableFormed and the engine's idempotent create makes one game.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from google.protobuf.message import DecodeError
from rummy.game.v1 import events_pb2 as ev
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy_client.wire import option_from_pb, option_to_pb
from rummy_rules.errors import RuleViolation
from rummy_rules.variants import rules_for
from rummy_service.auth import Principal, TokenIssuer
from rummy_service.errors import FailedPrecondition, InvalidArgument, NotFound, PermissionDenied, quote
from rummy_store import EventRecord
from rummy_store.publisher import Publisher

from rummy_matchmaking import journal
from rummy_matchmaking.journal import Journal
from rummy_matchmaking.pairing import FormedTable, PairingRules, Ticket, form_tables
from rummy_matchmaking.tournaments import (
    CONTRACT_ROUNDS,
    ROTATION,
    SERIES,
    Table,
    Tournament,
    TournamentError,
)

log = logging.getLogger("rummy_matchmaking")
PUBLISHERS = 16  # concurrent TableFormed appends
Option = int | bool | str


@dataclass(slots=True)
class TicketStatus:
    ticket: Ticket
    owner: str
    state: int = mm.TICKET_STATE_QUEUED
    game_id: str = ""
    seats: dict[str, int] = field(default_factory=dict)
    version: int = 0


def _moved(status: TicketStatus, seen: int) -> bool:
    return status.version != seen


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
        tables: Publisher,
        tokens: TokenIssuer,
        pairing: Mapping[str, PairingRules] | None = None,
        options: Mapping[str, Mapping[str, Option]] | None = None,
        *,
        clock: Callable[[], float] = time.time,  # wall time: enqueue times outlive the process
        turn_timeout_ms: int = 0,
    ) -> None:
        self._tables = tables
        self._tokens = tokens
        self._pairing = dict(pairing or {})
        self._options = {variant: dict(o) for variant, o in (options or {}).items()}
        self._clock = clock
        self._turn_timeout_ms = turn_timeout_ms  # for queue tables; 0 = the engine's default
        self.tickets: dict[str, TicketStatus] = {}
        self._queued: dict[str, str] = {}  # player -> their queued ticket: nobody waits (or sits) twice
        self.ratings: dict[tuple[str, str], tuple[int, float]] = {}  # (variant, player) -> games, ordinal
        self.skipped = 0  # scoring records that did not parse
        self.tournaments: dict[str, Tournament] = {}
        self._formed: set[str] = set()  # tournament tables published (a replayed round is not re-sent)
        # Changes decided on the state and then written (pairing, cancel, tournaments) run one at a
        # time, so nothing can change the state between the decision and its write.
        self._writing = asyncio.Lock()
        self._changed = asyncio.Condition()
        self._publisher = ThreadPoolExecutor(PUBLISHERS, thread_name_prefix="matchmaking-publish")
        self.tables_formed = 0

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
            for tournament in self.tournaments.values():
                new = tournament.record(event.game_id, event.match_scored)
                if new:
                    asyncio.get_running_loop().create_task(self._publish_round(tournament, new))

    # --- tickets -------------------------------------------------------------------------------------

    async def enqueue(self, caller: Principal, request: mm.EnqueueRequest) -> TicketStatus:
        players = (caller.subject, *request.party)
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
        busy = [p for p in players if p in self._queued]
        if busy:
            raise FailedPrecondition("already_queued", f"already in the queue: {', '.join(map(quote, busy))}")
        rating = sum(self.rating(request.variant, p)[1] for p in players) / len(players)
        ticket = Ticket(
            uuid.uuid4().hex,
            request.variant,
            players,
            rating,
            low,
            high,
            self._clock(),
            request.private_code,
        )
        for player in players:  # held while the ticket is written: a second enqueue is refused
            self._queued[player] = ticket.ticket_id
        status = TicketStatus(ticket, caller.subject)
        try:
            await asyncio.to_thread(self._tables.publish, *journal.ticket_queued(ticket, caller.subject))
        except BaseException:
            self._release(status)
            raise
        self.tickets[ticket.ticket_id] = status
        return status

    def _owned(self, caller: Principal, ticket_id: str) -> TicketStatus:
        status = self.tickets.get(ticket_id)
        if status is None:
            raise NotFound("no_such_ticket", f"no ticket {quote(ticket_id)}")
        if caller.subject not in status.ticket.players and not caller.is_operator:
            raise PermissionDenied("not_your_ticket", "only the ticket's players may see or cancel it")
        return status

    async def cancel(self, caller: Principal, ticket_id: str) -> TicketStatus:
        status = self._owned(caller, ticket_id)
        async with self._writing:  # not while a pairing round is writing this ticket's table
            if status.state == mm.TICKET_STATE_SEATED:
                raise FailedPrecondition(
                    "already_seated", f"ticket {ticket_id} is seated in {status.game_id}"
                )
            if status.state == mm.TICKET_STATE_QUEUED:
                await asyncio.to_thread(self._tables.publish, *journal.ticket_cancelled(ticket_id))
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
        """The ticket now and after every change, until seated or cancelled."""
        status = self._owned(caller, ticket_id)
        seen = -1
        while True:
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

    def token(self, player: str) -> str:
        return self._tokens.issue(player)

    # --- pairing -------------------------------------------------------------------------------------

    async def pair_once(self) -> int:
        """Form every table the queue allows now and publish them; returns the tables formed."""
        async with self._writing:
            return await self._pair()

    async def _pair(self) -> int:
        queued = [s.ticket for s in self.tickets.values() if s.state == mm.TICKET_STATE_QUEUED]
        if not queued:
            return 0
        formed = form_tables(queued, self._clock(), self._pairing)
        if not formed:
            return 0
        events = [(self._game_id(table), table) for table in formed]
        await asyncio.to_thread(self._publish_all, [self._table_event(g, t) for g, t in events])
        for game_id, table in events:
            for ticket in table.tickets:
                self._seat(self.tickets[ticket.ticket_id], game_id, table.players)
        self.tables_formed += len(events)
        async with self._changed:
            self._changed.notify_all()
        return len(events)

    def _seat(self, status: TicketStatus, game_id: str, players: Sequence[str]) -> None:
        status.state, status.game_id = mm.TICKET_STATE_SEATED, game_id
        status.seats = {p: list(players).index(p) for p in status.ticket.players}
        self._release(status)
        status.version += 1

    @staticmethod
    def _game_id(table: FormedTable) -> str:
        ids = ",".join(t.ticket_id for t in table.tickets)
        return "mm-" + hashlib.sha256(ids.encode()).hexdigest()[:24]

    def _table_event(self, game_id: str, table: FormedTable) -> mm.MatchmakingEvent:
        variant = table.tickets[0].variant
        return table_event(
            game_id,
            variant,
            table.players,
            self._options.get(variant, {}),
            ticket_ids=[t.ticket_id for t in table.tickets],
            turn_timeout_ms=self._turn_timeout_ms,
        )

    def _publish_all(self, tables: Sequence[mm.MatchmakingEvent]) -> None:
        """Publish tables concurrently (each append waits for acks=all); raises if any failed."""
        list(self._publisher.map(lambda table: self._tables.publish(*journal.table_formed(table)), tables))

    def close(self) -> None:
        self._publisher.shutdown(wait=True)

    async def run_pairing(self, interval_s: float, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await self.pair_once()
            except Exception:
                log.exception("pairing failed; the tickets stay queued and are retried")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), interval_s)

    # --- tournaments ---------------------------------------------------------------------------------

    async def create_tournament(self, request: mm.CreateTournamentRequest) -> Tournament:
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
        created = mm.TournamentCreated(
            tournament_id="tour-" + uuid.uuid4().hex[:12],
            variant=request.variant,
            format=request.format,
            rounds=request.rounds,
            table_size=request.table_size,
            options=request.options,
            seed=request.seed or uuid.uuid4().bytes,
        )
        async with self._writing:
            await asyncio.to_thread(self._tables.publish, *journal.tournament_created(created))
            tournament = _tournament(created)
            self.tournaments[tournament.tournament_id] = tournament
        return tournament

    def tournament(self, tournament_id: str) -> Tournament:
        tournament = self.tournaments.get(tournament_id)
        if tournament is None:
            raise NotFound("no_such_tournament", f"no tournament {quote(tournament_id)}")
        return tournament

    async def register(self, caller: Principal, tournament_id: str) -> int:
        tournament = self.tournament(tournament_id)
        async with self._writing:
            try:
                tournament.check_register(caller.subject)
            except TournamentError as exc:
                raise FailedPrecondition(exc.code, exc.message) from None
            call = journal.tournament_registered(tournament_id, caller.subject, len(tournament.players))
            await asyncio.to_thread(self._tables.publish, *call)
            return tournament.register(caller.subject)

    async def start_tournament(self, tournament_id: str) -> list[Table]:
        tournament = self.tournament(tournament_id)
        async with self._writing:
            try:
                tournament.first_seating()
            except TournamentError as exc:
                raise FailedPrecondition(exc.code, exc.message) from None
            call = journal.tournament_started(tournament_id, len(tournament.players))
            await asyncio.to_thread(self._tables.publish, *call)
            tables = tournament.start()
        await self._publish_round(tournament, tables)
        return tables

    async def _publish_round(self, tournament: Tournament, tables: Sequence[Table]) -> None:
        """Publish a round's tables, except those already on the topic (a round re-derived on restart)."""
        events = [
            table_event(
                t.game_id,
                tournament.variant,
                t.players,
                tournament.options_for(t),
                tournament_id=tournament.tournament_id,
                tournament_round=t.round,
                table_number=t.number,
            )
            for t in tables
            if t.game_id not in self._formed
        ]
        await asyncio.to_thread(self._publish_all, events)
        self._formed.update(event.game_id for event in events)
        self.tables_formed += len(events)

    # --- restart -------------------------------------------------------------------------------------

    def restore(self, folded: Journal) -> list[tuple[Tournament, list[Table]]]:
        """Take the state a previous instance wrote (before serving); returns the tables to publish.

        Tickets come back queued, cancelled or seated at the table their TableFormed names; a started
        tournament re-draws its first round from its seed. Later rounds follow from scoring's results,
        which the scoring consumer replays from the beginning.
        """
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
        missing = []
        for tournament_id, created in folded.tournaments.items():
            tournament = _tournament(created)
            for player in folded.registered.get(tournament_id, []):
                tournament.register(player)
            self.tournaments[tournament_id] = tournament
            if tournament_id in folded.started:
                tables = tournament.start()
                missing.append((tournament, [t for t in tables if t.game_id not in self._formed]))
        return [(t, tables) for t, tables in missing if tables]

    async def publish_restored(self, rounds: Sequence[tuple[Tournament, list[Table]]]) -> None:
        """Publish the first-round tables a previous instance had not published when it stopped."""
        for tournament, tables in rounds:
            await self._publish_round(tournament, tables)


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
