"""The engine's core: load a game (snapshot + log tail), decide, append with the expected seq, publish.

One `LiveGame` per game in memory, each behind an asyncio lock so one game's commands are decided
one at a time in log order. The log decides: an append that finds the game moved on (another writer)
reloads the game from the log and decides again once. Blocking store calls run on a thread pool, so
the event loop keeps serving streams. Access rules (who may see or do what) live in `access.py`;
this module is handed checked requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, Final, NoReturn, TypeVar

from rummy.game.v1 import events_pb2
from rummy_contracts import event_format, wire
from rummy_contracts.event_format import Logged
from rummy_contracts.facts import (
    PlayerAway,
    PlayerReturned,
    SeedContributed,
    TableSeated,
    TimeBankUsed,
    TurnTimedOut,
)
from rummy_contracts.projection import ENGINE_PREFIX, EngineState, GameProjection, Table
from rummy_rules.commands import Command
from rummy_rules.deal import awaiting_deal, first_deal
from rummy_rules.errors import RuleViolation
from rummy_rules.events import DealStarted, Event, OptionValue
from rummy_rules.forfeit import forfeit
from rummy_rules.game import Contributed, decide, evolve, start
from rummy_rules.state import GameState, Phase
from rummy_rules.variants import Rules, rules_for
from rummy_service.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    ServiceError,
    Unavailable,
    quote,
)
from rummy_store import (
    ConcurrencyError,
    EventRecord,
    LogPosition,
    NewEvent,
    NotWriterError,
    Snapshot,
    StoreError,
)
from rummy_store.catch_up import CatchUpReader
from rummy_store.records import Append

from rummy_engine import limits, presence, telemetry
from rummy_engine.commits import GroupCommitter
from rummy_engine.config import EngineConfig
from rummy_engine.eviction import Limits, Resident, to_evict
from rummy_engine.load_batches import LoadBatcher
from rummy_engine.seeds import check_contributed, game_seed
from rummy_engine.stores import Stores
from rummy_engine.streams import Fanout, Update, Watchers, update_for
from rummy_engine.timers import default_action
from rummy_engine.verify import Verification, verify_shuffles

log = logging.getLogger("rummy_engine")
T = TypeVar("T")
_GAME_ID: Final = re.compile(rf"^[A-Za-z0-9_.-]{{1,{limits.GAME_ID}}}$")
MAX_COMMAND_ID: Final = limits.COMMAND_ID
CREATE_COMMAND: Final = ENGINE_PREFIX + "create"
OWNER_TRAILER: Final = "meldstream-owner"  # trailing metadata of `not_owner`: the owner's address
MAX_DEFAULT_STEPS: Final = 4  # a default turn: draw, discard (rummy40 D11 may need a meld before it)
HANDOVER_S: Final = 10.0  # how long a partition given up is followed until the directory names its new owner
HANDOVER_POLL_S: Final = 0.05
CLAIM_WAIT_S: Final = 10.0  # how long a call about a partition being claimed here waits for the claim
DOUBT_WAIT_S: Final = 1.0  # how long a call waits for this engine's group membership to be confirmed
RESUMES_AT_ONCE: Final = 8  # open games loaded together when partitions are claimed (snapshot reads overlap)
Plan = Callable[[EngineState], list[Logged]]
"""What a command appends, decided from the game's state under its lock ([] = nothing)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """An accepted command: the seqs it appended (or had appended, for a retry) and the state now."""

    first_seq: int
    last_seq: int
    duplicate: bool
    state: EngineState
    seq: int


def _not_owner(partition: int, game_id: str, owner: str | None, otherwise: str) -> NoReturn:
    """UNAVAILABLE `not_owner`, naming `owner` in the message and the trailer when known."""
    where = f"engine {owner} owns it" if owner else otherwise
    trailers = ((OWNER_TRAILER, owner),) if owner else ()
    raise Unavailable("not_owner", f"partition {partition} of game {game_id}: {where}", trailers)


class LiveGame:
    """A loaded game: its folded state, its lock, its streams and its turn timer."""

    def __init__(self, game_id: str, partition: int, state: EngineState, seq: int) -> None:
        self.game_id = game_id
        self.partition = partition  # asked on every call: is it still this engine's to answer?
        self.state = state
        self.seq = seq
        self.lock = asyncio.Lock()
        self.fanout = Fanout()
        self.timer: asyncio.Task[None] | None = None
        self.deadline: float | None = None
        self.window_ends: float | None = None  # when the seed window closes, once timed (`_schedule`)
        self.streams = presence.SeatStreams()  # the seats' open streams here: who is connected
        self.banking: presence.Banking | None = None  # the seat to move is on its time bank
        self.clock_from: float | None = None  # loaded: its latest event's time (`_clock_from_log`)
        self.used = 0.0  # last call or event (the eviction clock)
        self.evicted = False  # dropped from memory: whoever still holds this object must reload

    @property
    def pinned(self) -> bool:
        """Something here depends on this object: an open stream, a pending timer, a command."""
        timing = self.timer is not None and not self.timer.done()
        return bool(len(self.fanout)) or timing or self.lock.locked()


class GameApp:
    """Creates, runs and replays games; every public method is called with already-checked access."""

    def __init__(
        self,
        stores: Stores,
        config: EngineConfig,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._stores = stores
        self._config = config
        self._clock = clock
        self._projection = GameProjection()
        self._reader: CatchUpReader[EngineState | None] = CatchUpReader(
            stores.log, self._projection, stores.snapshots, config.snapshot_every
        )
        self._loads = LoadBatcher(self._reader.load_many, self._io)
        self._games: OrderedDict[str, LiveGame] = OrderedDict()  # least recently used first
        self._loading: dict[str, asyncio.Lock] = {}
        self._limits = Limits(config.max_games, config.idle_evict_ms / 1000, config.finished_grace_ms / 1000)
        self._watchers = Watchers(config.max_watchers_per_game, config.max_watchers)
        self._sweeper: asyncio.Task[None] | None = None
        self._pool = ThreadPoolExecutor(config.workers, thread_name_prefix="engine-store")
        self.commits = GroupCommitter(stores.log, self._pool)
        self.commits.on_batch = telemetry.batch_written
        self._closed = False
        self._resuming: set[asyncio.Task[None]] = set()
        # The partitions whose games this engine writes: all of them on the embedded store; on Kafka
        # those the engines' group assigned and this engine claimed (`ownership.py`).
        self._owned: set[int] = set(range(stores.log.partitions)) if stores.kafka is None else set()
        self.owner_of: Callable[[int], str | None] = lambda partition: None  # set by `ownership`
        self.claiming: Callable[[int], bool] = lambda partition: False  # set by `ownership`
        # The group generation this engine is a member of now (None while that is in doubt: a lapsed
        # session, a rebalance), set by `ownership`, and the one whose assignment `_owned` reflects
        # (`joined`). The two differ after a pause past the session: the group moved on, and until
        # this engine hears of it, `_owned` names partitions another engine already writes.
        self.generation: Callable[[], int | None] = lambda: None
        self._joined: int | None = None
        self._claimed = asyncio.Event()  # set, and replaced, whenever partitions are claimed here
        # Partitions this engine gave up (moved, or handed over at a stop), followed in the owners
        # directory until another engine claims them: a call about one of their games waits for that
        # owner to be named rather than being told to retry blind (`_check_owner`).
        self._given: dict[int, float] = {}  # partition -> when it was given up (monotonic)
        self._successors: dict[int, str] = {}  # partition given up -> the engine that claimed it
        self._directory: Callable[[], dict[int, str]] | None = None  # set by `follow_handovers`
        self._advertised = ""
        self._following: asyncio.Task[None] | None = None

    def _seed(self, game_id: str) -> bytes:
        """A game's secret seed, derived again whenever needed: the log holds only its commitment."""
        return game_seed(self._config.seed_key, game_id)

    def _seeds(self, game_id: str, state: EngineState) -> Contributed:
        """The server's seed with the seats' own: every shuffle of the game mixes them (seeds.py)."""
        return Contributed(self._seed(game_id), state.seeds)

    async def _io(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    async def ready(self) -> bool:
        return await self._io(self._stores.probe)

    def resume_open_games(self) -> None:
        """Embedded store: load every game the log holds that has not ended, restarting its timer.

        After a restart, a game whose players never come back must still be played by the turn timer.
        On Kafka the same happens per partition as this engine claims it (`partitions_assigned`).
        """

        def open_games() -> list[str]:
            last: dict[str, str] = {}
            for partition in range(self._stores.log.partitions):
                for record in self._stores.log.read_partition(partition):
                    last[record.game_id] = record.event_type
            return [game_id for game_id, kind in last.items() if kind != "game_ended"]

        self._start_resume(open_games)

    def follow_handovers(self, directory: Callable[[], dict[int, str]], advertised: str) -> None:
        """Read the owners `directory` (partition -> address) to find who claims what this engine,
        known to others as `advertised`, gives up."""
        self._directory, self._advertised = directory, advertised

    def partitions_assigned(self, partitions: set[int]) -> None:
        """Claimed partitions (on the loop): their open games are loaded and their timers run here."""
        self._drop_games(partitions)  # claimed again after a fence: what memory holds may be old
        self._owned |= partitions
        self._claimed.set()
        self._claimed = asyncio.Event()
        for partition in partitions:
            self._given.pop(partition, None)
            self._successors.pop(partition, None)
        kafka = self._stores.kafka
        assert kafka is not None

        def open_games() -> list[str]:
            indexes = [kafka.index(p) for p in sorted(partitions)]
            return [game for index in indexes if index is not None for game in index.open_streams]

        self._start_resume(open_games)

    def joined(self, generation: int) -> None:
        """The group's assignment of `generation` is applied (on the loop, after its `partitions_revoked`)."""
        self._joined = generation

    def _current(self) -> bool:
        """Whether this engine is a member of the group's generation whose assignment it applied."""
        return self.generation() == self._joined

    def _answers_for(self, partition: int) -> bool:
        """Whether this engine may answer about `partition` now: it owns it, as a current member."""
        return partition in self._owned and self._current()

    def partitions_revoked(self, partitions: set[int]) -> None:
        """Partitions moving to another engine (on the loop): their games leave memory, timers stop,
        and their streams end with UNAVAILABLE naming the new owner, so clients reconnect there."""
        self._owned -= partitions
        if self._directory is not None:
            now = time.monotonic()
            for partition in partitions:
                self._given[partition] = now
                self._successors.pop(partition, None)
            if self._following is None or self._following.done():
                self._following = asyncio.get_running_loop().create_task(self._follow(self._directory))
        self._drop_games(partitions)

    def _drop_games(self, partitions: set[int]) -> None:
        """Games of `partitions` leave memory: timers stop, streams end (their clients resume)."""
        for game_id in [g for g, live in self._games.items() if live.partition in partitions]:
            live = self._games.pop(game_id)
            telemetry.LIVE_GAMES.dec()
            live.evicted = True
            self._loading.pop(game_id, None)
            if live.timer is not None:
                live.timer.cancel()
            live.fanout.end()

    async def _follow(self, directory: Callable[[], dict[int, str]]) -> None:
        """Re-read the directory often while a partition given up has no new owner in it (the
        ownership thread re-reads it every few seconds only, and not at all once stopped)."""
        while self._given:
            try:
                owners = await self._io(directory)
            except Exception as exc:  # a hint: callers are told to retry without it
                log.warning("reading partition owners failed: %s", exc)
                owners = {}
            now = time.monotonic()
            for partition, since in list(self._given.items()):
                owner = owners.get(partition)
                if owner and owner != self._advertised:
                    self._successors[partition] = owner
                if (owner and owner != self._advertised) or now - since > HANDOVER_S:
                    del self._given[partition]
            await asyncio.sleep(HANDOVER_POLL_S)

    async def handed_over(self) -> None:
        """Wait (at most HANDOVER_S) until every partition given up has a new owner in the directory,
        so a stopping engine still answers where its games went. No wait when the directory names no
        other engine: a last engine has no one to hand over to."""
        if self._directory is None or not self._given:
            return
        try:
            others = set((await self._io(self._directory)).values()) - {self._advertised}
        except Exception:
            others = set()
        while others and self._given:
            await asyncio.sleep(HANDOVER_POLL_S)

    def _start_resume(self, open_games: Callable[[], list[str]]) -> None:
        task = asyncio.get_running_loop().create_task(self._resume(open_games))
        self._resuming.add(task)
        task.add_done_callback(self._resuming.discard)

    async def _resume(self, open_games: Callable[[], list[str]]) -> None:
        try:
            games = await self._io(open_games)
        except Exception as exc:  # best effort: a game is also loaded when a client touches it
            log.warning("resuming open games failed: %s", exc)
            return
        began = time.monotonic()
        at_once = asyncio.Semaphore(RESUMES_AT_ONCE)

        async def resume(game_id: str) -> bool:
            async with at_once:
                try:
                    await self.game(game_id, background=True)
                    return True
                except Exception as exc:  # one unreadable game must not keep the others' timers off
                    log.warning("resuming game %s failed: %s", game_id, exc)
                    return False

        resumed = sum(await asyncio.gather(*(resume(g) for g in games)))
        log.info("resumed %d of %d open games in %.1f s", resumed, len(games), time.monotonic() - began)

    async def close(self) -> None:
        self._closed = True
        for task in (*self._resuming, self._sweeper, self._following):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        for live in self._games.values():
            if live.timer is not None:
                live.timer.cancel()
        telemetry.LIVE_GAMES.dec(len(self._games))
        self._pool.shutdown(wait=True)
        if self.commits.batches:
            log.info(
                "group commit: %d appends in %d batches (%.1f per batch)",
                self.commits.appends,
                self.commits.batches,
                self.commits.appends / self.commits.batches,
            )

    # --- loading --------------------------------------------------------------------------------------

    async def game(self, game_id: str, *, background: bool = False) -> LiveGame:
        """The loaded game; NotFound when the log has no such game. `background`: a load no client
        waits for (`_resume`), behind every load one does."""
        if not _GAME_ID.match(game_id):
            raise InvalidArgument("bad_game_id", f"not a game id: {game_id!r}")
        live = self._games.get(game_id)
        if live is None or not self._answers_for(live.partition):  # never old state from memory
            await self._check_owner(game_id)
            live = self._games.get(game_id)
        if live is not None:
            self._touch(live)
            return live
        lock = self._loading.setdefault(game_id, asyncio.Lock())
        if not background:
            self._loads.hurry(game_id)  # perhaps queued by `_resume`, which holds the lock meanwhile
        try:
            async with lock:
                live = self._games.get(game_id)
                if live is None:
                    loaded = await self._load(game_id, background=background)
                    live = self._adopt(loaded)
                    resuming = self._clock_from_log(live) if live is loaded else None
                    if resuming is not None and not background:  # its first view shows that clock
                        await asyncio.shield(resuming)
        finally:
            if game_id not in self._games and not lock.locked():  # not found: keep nothing of it
                self._loading.pop(game_id, None)
        return live

    async def _check_owner(self, game_id: str) -> None:
        """Unavailable `not_owner` for a game of a partition another engine owns, naming that engine
        (trailer `meldstream-owner`) when the directory knows it: the SDK goes there. For a partition
        this engine is giving up, the answer waits until the new owner is known (`_follow`); for one
        it is claiming (assigned here after its owner died or left), until it is claimed, at most
        CLAIM_WAIT_S: the directory still names the previous owner, and sending clients there had them
        bounce between a dead engine and this one, loading it while it claimed."""
        partition = self._stores.log.partition_for(game_id)
        deadline = time.monotonic() + CLAIM_WAIT_S
        while True:
            if partition in self._owned:
                if self._current():
                    return
                if not await self._membership_confirmed():
                    await self._in_doubt(partition, game_id)
                continue  # confirmed, perhaps by a rejoin that took the partition away: ask again
            if self.claiming(partition) and time.monotonic() < deadline:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._claimed.wait(), deadline - time.monotonic())
                continue
            owner = self.owner_of(partition) or self._successors.get(partition)
            if owner or partition not in self._given:
                break
            await asyncio.sleep(HANDOVER_POLL_S)
        _not_owner(partition, game_id, owner, "it moved, or this engine is starting: retry")

    async def _membership_confirmed(self) -> bool:
        """Whether this engine is a current member of the group, waiting at most DOUBT_WAIT_S while in
        doubt: a heartbeat late under load comes back at once, a lapsed session means another engine
        may own what `_owned` still lists (the revocation reaches the loop after the rejoin)."""
        deadline = time.monotonic() + DOUBT_WAIT_S
        while not self._current():
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(HANDOVER_POLL_S)
        return True

    async def _in_doubt(self, partition: int, game_id: str) -> NoReturn:
        """Unavailable `not_owner` while membership is in doubt, naming the owner the directory names
        now, if another: never an answer from this engine's possibly deposed copy."""
        owner = None
        if self._directory is not None:
            with contextlib.suppress(Exception):  # a hint only: without it the client retries here
                owner = (await self._io(self._directory)).get(partition)
        owner = owner if owner != self._advertised else None
        _not_owner(partition, game_id, owner, "this engine's group membership lapsed: retry")

    def _adopt(self, loaded: LiveGame) -> LiveGame:
        """The one `LiveGame` of a game: `loaded`, unless another was adopted while it was built.

        `create` and a load (a player's stream opened as soon as matchmaking seats them) can both
        build one for the same game; a second object would have its own lock, streams and turn timer,
        so moves made through one would never reach streams opened on the other.
        """
        live = self._games.setdefault(loaded.game_id, loaded)
        self._touch(live)
        if live is loaded:
            telemetry.LIVE_GAMES.inc()
            self._schedule(live)
            self._evict()
            if self._sweeper is None and not self._closed:
                self._sweeper = asyncio.get_running_loop().create_task(self._sweep())
        return live

    @contextlib.asynccontextmanager
    async def _locked(self, game_id: str) -> AsyncIterator[LiveGame]:
        """The loaded game with its lock held (reloaded if it was dropped while we waited)."""
        while True:
            live = await self.game(game_id)
            await live.lock.acquire()
            if not live.evicted:
                break
            live.lock.release()
        try:
            yield live
        finally:
            live.lock.release()

    # --- memory ---------------------------------------------------------------------------------------

    def _touch(self, live: LiveGame) -> None:
        live.used = self._clock()
        self._games.move_to_end(live.game_id)

    def _evict(self) -> None:
        """Drop the games `eviction.to_evict` names; their next call reloads them from the stores."""
        residents = (
            Resident(g.game_id, g.used, g.state.game.phase is Phase.GAME_OVER, g.pinned)
            for g in self._games.values()
        )
        for game_id in to_evict(residents, self._clock(), self._limits):
            self._games.pop(game_id).evicted = True
            telemetry.LIVE_GAMES.dec()
            self._loading.pop(game_id, None)

    async def _sweep(self) -> None:
        interval = max(0.01, min(self._limits.idle_s, self._limits.finished_grace_s, 10.0) / 2)
        while True:
            await asyncio.sleep(interval)
            self._evict()

    @property
    def owned(self) -> frozenset[int]:
        """The partitions whose games this engine writes now."""
        return frozenset(self._owned)

    @property
    def loaded(self) -> list[str]:
        """The games in memory, least recently used first."""
        return list(self._games)

    async def _load(self, game_id: str, *, background: bool = False) -> LiveGame:
        try:
            loaded = await self._loads.load(game_id, background=background)
        except StoreError as exc:
            raise Unavailable("store_unavailable", str(exc)) from None
        if loaded.state is None or not loaded.state.table.players:
            # GameStarted and TableSeated are one command, but a load racing `create` can read the
            # first without the second: the game is not there yet. Nothing is cached, so a retry
            # (`server._appearing` waits so for a game just seated) sees the table once it is logged.
            raise NotFound("no_such_game", f"no game {game_id!r} (yet)")
        return LiveGame(game_id, self._stores.log.partition_for(game_id), loaded.state, loaded.seq)

    async def _reload(self, live: LiveGame) -> None:
        """Catch up with the log after another writer moved the game: streams and timer follow."""
        fresh = await self._load(live.game_id)
        moved = fresh.seq > live.seq
        live.state, live.seq = fresh.state, fresh.seq
        if moved:  # the events were not decided here, so streams get the new state as a whole view
            live.fanout.publish(Update(live.seq, "view", None, False, live.state))
        self._schedule(live)

    # --- creating -------------------------------------------------------------------------------------

    async def create(
        self,
        game_id: str,
        variant: str,
        players: Sequence[str],
        options: Mapping[str, OptionValue],
        turn_timeout_ms: int,
        *,
        requested_by: str,
        names: Sequence[str] = (),
        bots: Sequence[bool] = (),
        rated: bool = False,
        time_bank_ms: int | None = None,
    ) -> LiveGame:
        """A new game (GameStarted, then TableSeated, in one command), or the same one again.
        `time_bank_ms`: each seat's bank (None: the engine's default)."""
        game_id = game_id or self._new_game_id()
        if not _GAME_ID.match(game_id):
            raise InvalidArgument(
                "bad_game_id", f"a game id is 1-{limits.GAME_ID} letters, digits, '-', '_' or '.'"
            )
        if not players or any(not p for p in players):
            raise InvalidArgument("bad_players", "name a player id for every seat")
        if len(set(players)) != len(players):  # one player's seats would all act on one token
            raise InvalidArgument("duplicate_player", "a player sits at one seat only")
        for name, value in options.items():  # an unset option would be logged, yet count as unset
            if value is None:
                raise InvalidArgument("bad_option", f"option {quote(name)} has no value")
        await self._check_owner(game_id)
        bank = self._config.time_bank_ms if time_bank_ms is None else time_bank_ms
        table = Table(tuple(players), turn_timeout_ms, tuple(names), tuple(bots), requested_by, rated, bank)
        try:
            rules = rules_for(variant, len(players), **dict(options))
            first = start(variant, len(players), self._seed(game_id), **dict(options))
        except RuleViolation as exc:  # unknown variant, table size or option: a malformed request
            raise InvalidArgument(exc.code, exc.message) from None
        if self._config.seed_window_ms:  # the first deal waits for the seats' seeds (`contribute_seed`)
            first = replace(first, deck=())
        existing = self._games.get(game_id)
        if existing is not None:
            return self._same_table(existing, table, rules)
        in_force = turn_timeout_ms or self._config.turn_timeout_ms
        seated = TableSeated(
            table.players,
            turn_timeout_ms,
            tuple(sorted(options.items())),
            requested_by,
            in_force,
            table.names,
            table.bots,
            rated,
            bank,
        )
        state = self._projection.fold(None, CREATE_COMMAND, 1, first)
        state = self._projection.fold(state, CREATE_COMMAND, 2, seated)
        try:
            # No read of the log: an append expecting seq 0 fails when the game exists.
            await self._check_forgotten(game_id)
            result = await self._append_events(game_id, CREATE_COMMAND, 0, [first, seated])
        except ConcurrencyError:
            return self._same_table(await self.game(game_id), table, rules)
        if result.duplicate:  # created before; the same table answers the same game
            return self._same_table(await self.game(game_id), table, rules)
        telemetry.game_created(game_id, variant, table.players, requested_by)
        return self._adopt(LiveGame(game_id, self._stores.log.partition_for(game_id), state, 2))

    def _new_game_id(self) -> str:
        """A fresh id in a partition this engine owns, so a CreateGame without an id lands where it is
        asked (with no partition of its own, any id: the refusal names the owner of its partition)."""
        log_ = self._stores.log
        for _ in range(64 * log_.partitions):
            game_id = uuid.uuid4().hex
            if log_.partition_for(game_id) in self._owned:
                return game_id
        return game_id

    async def _check_forgotten(self, game_id: str) -> None:
        """ConcurrencyError for a game that ended so long ago that the partition index forgot it.

        The index keeps open games and the latest ended ones; every finished game has a snapshot, so
        one snapshot read (not a scan of the log) tells a forgotten game from a new one.
        """
        kafka = self._stores.kafka
        index = kafka.index(kafka.partition_for(game_id)) if kafka is not None else None
        if index is None or index.head(game_id) is not None:
            return
        try:
            snapshot = await self._io(self._stores.snapshots.load, game_id)
        except Exception as exc:
            raise Unavailable("store_unavailable", f"snapshot store: {exc}; retry") from None
        if snapshot is not None:
            raise ConcurrencyError(game_id, 0, snapshot.seq)

    @staticmethod
    def _same_table(live: LiveGame, table: Table, rules: Rules) -> LiveGame:
        """The existing game for a create that asks for it again: same seats, turn limit and rules.

        Rules, not the options as asked: spelling out a default asks for the same game.
        """
        if live.state.table != table or live.state.game.rules != rules:
            raise AlreadyExists("game_exists", f"game {live.game_id} exists with another table")
        return live

    # --- acting ---------------------------------------------------------------------------------------

    async def submit(
        self, game_id: str, seat: int, command_id: str, command: Command, digest: str = ""
    ) -> Outcome:
        """A player's command; a player who acts while marked away is back (PlayerReturned first).

        A command id belongs to the seat that sent it and to the request it came with (`digest`, of
        the action as sent; logged in its events): the same id from another seat, or from its seat
        with another action, is refused (ALREADY_EXISTS `command_id_reused`), never answered with
        another command's outcome. The same request again is a retry, answered with the original
        outcome. The log records the client's id as sent, so older games replay and retry unchanged.
        """
        if not command_id or len(command_id) > MAX_COMMAND_ID or command_id.startswith(ENGINE_PREFIX):
            raise InvalidArgument(
                "bad_command_id",
                f"a command id is 1-{MAX_COMMAND_ID} characters, not starting with {ENGINE_PREFIX!r}",
            )

        async with self._locked(game_id) as live:

            def plan(state: EngineState) -> list[Logged]:
                back: list[Logged] = [PlayerReturned(seat)] if state.away[seat] else []
                back += presence.reconnect(state, seat)  # acting is being back
                bank = presence.spent(state, seat, live.banking, self._clock())
                return back + bank + self._decide(game_id, state, state.game, command)

            outcome = await self._apply(live, command_id, plan, digest)
        sent = outcome.state.commands.get(command_id)
        if outcome.duplicate and (sent is None or sent.seat != seat):
            raise AlreadyExists(
                "command_id_reused", "another seat used this command id in this game; send a new one"
            )
        if outcome.duplicate and sent is not None and sent.digest and digest and sent.digest != digest:
            raise AlreadyExists(
                "command_id_reused",
                "this command id came with another action; a retry repeats its request, a new action "
                "needs a new id",
            )
        return outcome

    def _decide(self, game_id: str, state: EngineState, game: GameState, command: Command) -> list[Event]:
        """The rules' decision in `game` (`state`'s, or one step on); a refusal is FAILED_PRECONDITION
        with the rule code and citation."""
        try:
            return decide(game, command, seed=self._seeds(game_id, state))
        except RuleViolation as exc:
            text = exc.message + (f" ({exc.rule})" if exc.rule else "")
            raise FailedPrecondition(exc.code, text) from None

    async def _apply(self, live: LiveGame, command_id: str, plan: Plan, digest: str = "") -> Outcome:
        """Plan and append under the game's lock; the original outcome for a known command id."""
        for attempt in (1, 2):
            known = live.state.commands.get(command_id)
            if known is not None:
                return Outcome(known.first, known.last, True, live.state, live.seq)
            produced = plan(live.state)
            if not produced:  # an accepted command that changes nothing: no append
                return Outcome(0, 0, False, live.state, live.seq)
            try:
                result = await self._append_events(live.game_id, command_id, live.seq, produced, digest)
            except ConcurrencyError:
                if attempt == 2:
                    raise Unavailable(
                        "contention", "the game kept moving; retry with the same command id"
                    ) from None
                await self._reload(live)
                continue
            if result.duplicate:  # appended before, by an earlier owner of the game's partition
                await self._reload(live)
                return Outcome(result.first_seq, result.last_seq, True, live.state, live.seq)
            self._advance(live, command_id, produced, result.positions, digest)
            return Outcome(result.first_seq, result.last_seq, False, live.state, live.seq)
        raise AssertionError("unreachable")

    async def _append_events(
        self, game_id: str, command_id: str, expected: int, produced: list[Logged], digest: str = ""
    ) -> Any:
        now = self._clock()
        try:
            new = [
                NewEvent(
                    event_format.event_type(event),
                    event_format.envelope(
                        game_id, expected + 1 + i, command_id, event, now, digest=digest
                    ).SerializeToString(),
                    event_format.SCHEMA_VERSION,
                )
                for i, event in enumerate(produced)
            ]
        except wire.CodecError as exc:  # the rules produced what the event contract cannot carry yet
            raise ServiceError("event_not_loggable", str(exc)) from None
        began = time.perf_counter()
        try:
            result = await self.commits.append(Append(game_id, command_id, expected, new))
        except NotWriterError as exc:  # the partition moved to another engine
            raise Unavailable("not_owner", f"{exc}; retry with the same command id") from None
        except ConcurrencyError:
            raise
        except StoreError as exc:
            raise Unavailable("store_unavailable", f"{exc}; retry with the same command id") from None
        telemetry.APPEND_SECONDS.observe(time.perf_counter() - began)
        return result

    def _advance(
        self,
        live: LiveGame,
        command_id: str,
        produced: list[Logged],
        positions: Sequence[Any],
        digest: str = "",
    ) -> None:
        self._touch(live)  # under the game's lock, so the game is loaded (never dropped while locked)
        previous = live.seq
        last: LogPosition | None = None  # where the last event landed
        for n, (event, position) in enumerate(zip(produced, positions, strict=True), 1):
            live.seq += 1
            live.state = self._projection.fold(live.state, command_id, live.seq, event, digest)
            kind = event_format.event_type(event)
            settled = n == len(produced)
            live.fanout.publish(update_for(live.seq, command_id, event, kind, live.state, settled=settled))
            if type(event) in telemetry.NOTED:
                telemetry.noted(live.game_id, live.seq, event, live.state)
            if type(event) is TimeBankUsed:  # what the bank ran for is logged: the turn is off it
                live.banking = None
            last = position
        every = self._config.snapshot_every
        over = live.state.game.phase is Phase.GAME_OVER
        if last is not None and (live.seq // every > previous // every or over):
            # A finished game always has one: it is how a game the partition index forgot is still known.
            # Serialised and saved off the loop, from a copy of the maps later folds add to.
            state = replace(live.state, commands=dict(live.state.commands))
            self._pool.submit(self._save_snapshot, live.game_id, live.seq, last, state)
        self._schedule(live)

    def _save_snapshot(self, game_id: str, seq: int, position: LogPosition, state: EngineState) -> None:
        """In a worker thread. Snapshots are a cache: a failed save is logged, and the next one tries."""
        try:
            data = self._projection.dumps(state)
            self._stores.snapshots.save(Snapshot(game_id, seq, position, self._projection.version, data))
        except Exception as exc:
            log.warning("game %s: snapshot at seq %d not saved: %s", game_id, seq, exc)

    # --- turn timer -----------------------------------------------------------------------------------

    def _schedule(self, live: LiveGame) -> None:
        """(Re)start the timer of the seat to move: its turn limit, or the grace of an away seat."""
        current = asyncio.current_task()
        if live.timer is not None and live.timer is not current:
            live.timer.cancel()
        live.timer, live.deadline = None, None
        since, live.clock_from = live.clock_from, None
        game = live.state.game
        if live.evicted or self._closed:
            return
        if awaiting_deal(game):
            self._time_window(live)
            return
        if live.banking is not None and (live.banking.seat != game.turn or not presence.in_play(live.state)):
            live.banking = None
        if game.phase not in (Phase.DRAW, Phase.PLAY):
            return
        now, state, seat = self._clock(), live.state, game.turn
        limit_ms = self._timed_ms(state, seat)
        away_grace_ms = self._config.away_grace_ms
        ends = presence.deadline(
            state,
            seat,
            now,
            limit_ms=limit_ms,
            away_grace_ms=away_grace_ms,
            banking=live.banking,
            since=since,
        )
        if ends is None:
            return
        live.deadline = ends
        live.timer = asyncio.create_task(self._expire(live, live.seq, max(0.0, ends - now)))

    def _timed_ms(self, state: EngineState, seat: int) -> int | None:
        """The turn limit of `seat` (`_limit_ms`), None for an untimed turn (an away seat is always timed)."""
        limit = self._limit_ms(state, seat)
        return limit if limit or state.away[seat] else None

    def _clock_from_log(self, live: LiveGame) -> asyncio.Task[None] | None:
        """Resume the clock of a game loaded here (a restart, a partition moved) where the log says it
        stands, rather than afresh: read when its latest event was logged (a client's load waits for
        it, one short read; a takeover's loads do not, and their turns are timed from the load until
        then), then time the seat to move from that, on its bank if the limit is past
        (`presence.resumed`). None: the turn is not timed."""
        game = live.state.game
        if not presence.in_play(live.state) or self._timed_ms(live.state, game.turn) is None:
            return None
        task = asyncio.get_running_loop().create_task(
            self._resume_clock(live, live.seq, self._latest(live.game_id))
        )
        self._resuming.add(task)  # awaited or cancelled at close
        task.add_done_callback(self._resuming.discard)
        return task

    def _latest(self, game_id: str) -> LogPosition | None:
        """Where the game's latest record sits, if the store knows (on Kafka; elsewhere a read is cheap)."""
        kafka = self._stores.kafka
        return kafka.last_position(game_id) if kafka is not None else None

    def _occurred_at(self, game_id: str, seq: int, hint: LogPosition | None) -> float | None:
        """When the game's event `seq` was logged (epoch s), read from the log; None if it is not there."""
        for record in self._stores.log.read_stream(game_id, seq, hint):
            if record.seq == seq:
                return event_format.message_of(record).occurred_at.ToNanoseconds() / 1e9
        return None

    async def _resume_clock(self, live: LiveGame, seq: int, hint: LogPosition | None) -> None:
        try:
            since = await self._io(self._occurred_at, live.game_id, seq, hint)
        except Exception as exc:  # best effort: the turn stays timed from the load
            log.warning("game %s: clock not resumed from the log: %s", live.game_id, exc)
            return
        async with live.lock:
            if since is None or live.seq != seq or live.evicted or self._closed or live.banking is not None:
                return  # the game moved on meanwhile: its clock restarted here
            state, seat = live.state, live.state.game.turn
            live.banking = presence.resumed(state, seat, self._clock(), since, self._timed_ms(state, seat))
            live.clock_from = since
            self._schedule(live)

    def _limit_ms(self, state: EngineState, seat: int) -> int:
        """The time `seat` is given: the away grace, or its table's turn limit in force (0: none)."""
        if state.away[seat]:
            return self._config.away_grace_ms
        return state.table.turn_timeout_ms or self._config.turn_timeout_ms

    def _default_turn(self, game_id: str, state: EngineState, seq: int) -> list[Logged]:
        """TurnTimedOut (and PlayerAway at the limit), then the default action until the turn passes.

        One command holds the whole default turn, so the log says in one place that the engine
        played it and why; `timers.default_action` chooses each step.
        """
        game = state.game
        seat = game.turn
        away = state.away[seat]
        in_a_row = state.timeouts[seat] + 1
        out: list[Logged] = [TurnTimedOut(seat, in_a_row, away, self._limit_ms(state, seat))]
        if presence.forfeits(state, seat, self._clock()):  # gone past every grace (meldstream M3)
            try:
                return out + forfeit(game, seat, self._seeds(game_id, state))
            except RuleViolation as exc:
                raise FailedPrecondition(exc.code, exc.message) from None
        if not away and in_a_row >= self._config.away_after:
            out.append(PlayerAway(seat))
        for step in range(MAX_DEFAULT_STEPS):
            produced = self._decide(game_id, state, game, default_action(game, seat, game_id, seq + step))
            out.extend(produced)
            for event in produced:
                game = evolve(game, event)
            if game.phase is not Phase.PLAY or game.turn != seat:
                break
        return out

    async def _expire(self, live: LiveGame, seq: int, delay_s: float) -> None:
        await asyncio.sleep(delay_s)
        async with live.lock:
            if live.seq != seq or self._closed or live.evicted:
                return
            if presence.starts_bank(live.state, live.state.game.turn, live.banking):
                live.banking = presence.Banking(live.state.game.turn, self._clock())
                self._schedule(live)  # the turn goes on on the bank
                return

            def plan(state: EngineState) -> list[Logged]:
                # After a reload (another writer moved the game) the turn is no longer the timed one.
                if live.seq != seq:
                    return []
                bank = presence.spent(state, state.game.turn, live.banking, self._clock())
                return bank + self._default_turn(live.game_id, state, seq)

            try:
                await self._apply(live, f"{ENGINE_PREFIX}turn/{seq}", plan)
            except (ValueError, FailedPrecondition):  # a rules bug, not a passing fault: say so
                log.exception("game %s: no default action at seq %d; timer stopped", live.game_id, seq)
            except Exception as exc:  # the store is down or the lease moved: try again later
                log.warning("game %s: default action failed: %s", live.game_id, exc)
                if live.seq == seq:
                    live.timer = asyncio.create_task(self._expire(live, seq, 1.0))
                else:  # the log moved on meanwhile (read by `_reload`): time the seat now to move
                    self._schedule(live)

    # --- the seats' seeds ------------------------------------------------------------------------------

    async def contribute_seed(self, game_id: str, seat: int, seed: bytes) -> Outcome:
        """A seat's own seed before the first deal (`SeedContributed`), dealt at once when it is the
        last seat's. Refused, changing nothing: a length outside 16-64 bytes (INVALID_ARGUMENT
        `bad_seed_length`), another seed from a seat that sent one (ALREADY_EXISTS `seed_already_sent`),
        a seed once the first deal is dealt (FAILED_PRECONDITION `seed_window_closed`). The same seed
        again from its seat is a retry, answered with the original outcome."""
        check_contributed(seed)
        command_id = f"{ENGINE_PREFIX}seed/{seat}"

        def plan(state: EngineState) -> list[Logged]:
            seeds = (*state.seeds[:seat], seed, *state.seeds[seat + 1 :])
            contributed: list[Logged] = [SeedContributed(seat, seed)]
            if all(seeds):  # no one left to wait for
                return [*contributed, self._first_deal(game_id, replace(state, seeds=seeds))]
            return contributed

        async with self._locked(game_id) as live:
            sent = live.state.seeds[seat] if seat < len(live.state.seeds) else b""
            if sent and sent != seed:
                raise AlreadyExists("seed_already_sent", f"seat {seat} sent its seed already; one per seat")
            if sent and command_id not in live.state.commands:  # a retry long after: nothing to add
                return Outcome(0, 0, True, live.state, live.seq)
            if not sent and not awaiting_deal(live.state.game):
                raise FailedPrecondition(
                    "seed_window_closed", "the first deal is dealt: seeds are taken only before it"
                )
            return await self._apply(live, command_id, plan)

    def _first_deal(self, game_id: str, state: EngineState) -> DealStarted:
        return first_deal(state.game, self._seeds(game_id, state))

    def _time_window(self, live: LiveGame) -> None:
        """Time the seed window of a game awaiting its first deal: it closes ENGINE_SEED_WINDOW_MS after
        the game was created or, after a restart or a move of its partition, loaded here."""
        if live.window_ends is None:
            live.window_ends = self._clock() + self._config.seed_window_ms / 1000
        live.deadline = live.window_ends
        delay_s = max(0.0, live.window_ends - self._clock())
        live.timer = asyncio.create_task(self._close_window(live, delay_s))

    async def _close_window(self, live: LiveGame, delay_s: float) -> None:
        """The first deal with the seeds sent so far, when the window closes before every seat sent one.
        Its DealStarted follows the SeedContributed events in the log, so a replay sees the same deal."""
        await asyncio.sleep(delay_s)
        async with live.lock:
            if self._closed or live.evicted or not awaiting_deal(live.state.game):
                return

            def plan(state: EngineState) -> list[Logged]:
                return [self._first_deal(live.game_id, state)] if awaiting_deal(state.game) else []

            try:
                await self._apply(live, f"{ENGINE_PREFIX}deal/first", plan)
            except ValueError:  # the seed key changed under an open game: no retry can deal it
                log.exception("game %s: no first deal; window timer stopped", live.game_id)
            except Exception as exc:  # the store is down or the lease moved: try again shortly
                log.warning("game %s: first deal failed: %s", live.game_id, exc)
                if awaiting_deal(live.state.game):
                    live.timer = asyncio.create_task(self._close_window(live, 1.0))

    async def return_to_table(self, game_id: str, seat: int) -> LiveGame:
        """PlayerReturned for an away seat (its timer is the turn limit again); else nothing."""

        def plan(state: EngineState) -> list[Logged]:
            return [PlayerReturned(seat)] if state.away[seat] else []

        async with self._locked(game_id) as live:
            await self._apply(live, f"{ENGINE_PREFIX}return/{seat}/{live.seq}", plan)
        return live

    # --- reading --------------------------------------------------------------------------------------

    async def history(self, game_id: str) -> list[tuple[EventRecord, events_pb2.GameEvent, Logged]]:
        """Every record of the game with its envelope and rules event, read from the log; a record the
        fold skips (a stray or unreadable one, reported by the reader) is left out as loads leave it."""
        await self.game(game_id)
        try:
            steps = await self._io(lambda: [s for s in self._reader.steps(game_id) if not s.skipped])
        except StoreError as exc:
            raise Unavailable("store_unavailable", str(exc)) from None
        out = []
        for step in steps:
            message = event_format.message_of(step.record)
            out.append((step.record, message, event_format.event_from_pb(message)))
        return out

    async def states(self, game_id: str, after_seq: int, upto: int) -> list[Update]:
        """Updates for seqs after_seq+1 .. upto, folded from the log (a resumed stream's catch-up)."""
        updates = []
        state: EngineState | None = None
        for record, _, event in await self.history(game_id):
            if record.seq > upto:
                break
            state = self._projection.fold(state, record.command_id, record.seq, event)
            if record.seq > after_seq:
                kind, settled = record.event_type, record.seq == upto
                updates.append(update_for(record.seq, record.command_id, event, kind, state, settled=settled))
        return updates

    async def state_at(self, game_id: str, seq: int) -> tuple[EngineState, int]:
        live = await self.game(game_id)
        if seq < 1 or seq > live.seq:
            raise InvalidArgument("bad_seq", f"seq must be 1..{live.seq}")
        state: EngineState | None = None
        for record, _, event in await self.history(game_id):
            if record.seq > seq:
                break
            state = self._projection.fold(state, record.command_id, record.seq, event)
        assert state is not None
        return state, seq

    async def verify(self, game_id: str) -> Verification:
        entries = await self.history(game_id)
        try:
            return verify_shuffles([(record.seq, event) for record, _, event in entries])
        except ValueError as exc:
            raise FailedPrecondition("game_not_over", str(exc)) from None

    async def watch(
        self, game_id: str, after_seq: int, *, watcher: bool = True, seat: int | None = None
    ) -> AsyncGenerator[Update, None]:
        """The opening view (after_seq 0) or the missed updates, then every new one, until the game ends.

        A spectator (`watcher`) past the limits is refused (`streams.TooManyWatchers`); a player's own
        stream never is. A stream of `seat` (checked as the caller's) keeps the seat connected."""
        live = await self.game(game_id)
        if watcher:
            self._watchers.check(live.fanout.watchers)
            self._watchers.open += 1
        subscription = live.fanout.open(self._config.stream_queue, watcher=watcher)
        if seat is not None:
            live.streams.opened(seat)
        try:
            if seat is not None:
                await self._presence(live, seat)
            now_seq, now_state = live.seq, live.state
            if after_seq == 0 or after_seq > now_seq:
                sent = now_seq
                yield live.fanout.opening(now_seq, now_state)
            else:
                sent = after_seq
                for update in await self.states(game_id, after_seq, now_seq):
                    sent = update.seq
                    yield update
            if now_state.game.phase is Phase.GAME_OVER:
                return
            while True:
                next_update = await subscription.next()
                if next_update is None:
                    await self._check_owner(game_id)  # names the new owner once it is known
                    raise Unavailable("not_owner", "the game moved to another engine: resume the stream")
                if next_update.seq <= sent:
                    continue
                sent = next_update.seq
                yield next_update
                if next_update.game.phase is Phase.GAME_OVER:
                    return
        finally:
            live.fanout.close(subscription)
            self._watchers.open -= watcher
            if seat is not None and live.streams.closed(seat):
                task = asyncio.get_running_loop().create_task(self._presence(live, seat))
                self._resuming.add(task)  # awaited or cancelled at close, as resumes are
                task.add_done_callback(self._resuming.discard)

    async def _presence(self, live: LiveGame, seat: int) -> None:
        """Log what the seat's streams here say of it, if the log says otherwise: SeatReconnected
        while one is open, SeatDisconnected once none is (presence.py). A game that left this engine
        (its streams end then) or an engine stopping logs nothing."""

        def plan(state: EngineState) -> list[Logged]:
            if live.streams.connected(seat):
                return presence.reconnect(state, seat)
            config = self._config
            return presence.disconnect(
                state, seat, self._clock(), config.disconnect_grace_ms, config.forfeit_after_turns
            )

        async with live.lock:
            if live.evicted or self._closed:
                return
            try:
                await self._apply(live, f"{ENGINE_PREFIX}presence/{seat}/{live.seq}", plan)
            except ServiceError as exc:  # the store is down or the game moved: presence is best effort
                if exc.code != "not_owner":  # a game that moved (a handover): its new owner's streams say
                    log.warning("game %s: seat %d presence not logged: %s", live.game_id, seat, exc)
