"""Starting and stopping one matchmaking instance: its journal, partition ownership, the ratings
reader, pairing, the gRPC server.

Embedded (no Kafka): one instance owns every partition of its sqlite journal. On Kafka the instances
of one consumer group share the topic's partitions the way the engines share theirs
(`rummy_store.ownership`): a partition is claimed (the broker fences its previous writer) before it is
folded and served, and dropped before it is served elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rummy.matchmaking.v1 import matchmaking_pb2, matchmaking_pb2_grpc
from rummy_service.consumer import ConsumerLoop
from rummy_service.forwarding import ForwardMarks, forwarding_key
from rummy_service.public_keys import keys_ready, verifier
from rummy_service.rate_limits import Limiter, RateLimiting
from rummy_service.server import ServiceHost
from rummy_store import EventLog, EventRecord
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.ownership import OwnerDirectory, PartitionOwnership

from rummy_matchmaking.app import MatchmakingApp
from rummy_matchmaking.config import MatchmakingConfig
from rummy_matchmaking.forwarding import Router
from rummy_matchmaking.journal import check_format, read_journal
from rummy_matchmaking.server import MatchmakingServicer

log = logging.getLogger("rummy_matchmaking")
SETTLE_S = 60.0  # how long a start waits for its first partitions (past it, health says NOT_SERVING)
SERVICE_NAME = matchmaking_pb2.DESCRIPTOR.services_by_name["MatchmakingService"].full_name
JOURNAL_FILE = "tables.sqlite"  # the journal, on the embedded store
DIRECTORY_TIMEOUT_S = 5.0  # bound on each call to the owners directory (Redis)


@dataclass(slots=True)
class RunningMatchmaking:
    config: MatchmakingConfig
    app: MatchmakingApp
    host: ServiceHost
    journal: EventLog
    router: Router
    logs: list[EventLog]
    ownership: PartitionOwnership | None = None
    loops: list[ConsumerLoop] = field(default_factory=list)
    pairing: asyncio.Task[None] | None = None
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    moves: asyncio.Lock = field(default_factory=asyncio.Lock)  # adopt and drop in the order they came
    # Moves the ownership thread reported (counted there, before `settled` can be set) and moves done
    # (counted on the loop): each counter has one writer, so no lock.
    moves_reported: int = 0
    moves_done: int = 0
    tasks: set[asyncio.Task[None]] = field(default_factory=set)

    @property
    def address(self) -> str:
        return self.host.address

    @property
    def pending_moves(self) -> int:
        return self.moves_reported - self.moves_done

    async def stop(self) -> None:
        self.stopping.set()
        if self.pairing is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self.pairing
        await self.host.stop()
        await self.router.close()
        if self.ownership is not None:  # leave the group: the other instances take the partitions now
            await asyncio.to_thread(self.ownership.stop)
        for loop in self.loops:
            await asyncio.to_thread(loop.stop)
        for reader in self.logs:
            reader.close()
        self.journal.close()

    async def settled(self, timeout_s: float) -> bool:
        """Wait until this instance serves its first share of the partitions (health: SERVING)."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        while self.ownership is not None and (not self.ownership.settled.is_set() or self.pending_moves):
            if asyncio.get_running_loop().time() > deadline:
                return False
            await asyncio.sleep(0.05)
        return True

    async def move(self, taken: Iterable[int], lost: Iterable[int]) -> None:
        """Adopt (fold, then serve) or drop partitions, one move at a time in the order they came."""
        taken, lost = set(taken), set(lost)
        try:
            async with self.moves:
                if lost:
                    await self.app.drop(lost)
                if taken:
                    await self.app.drop(taken & self.app.owned)  # fenced and claimed again: fold anew
                    folded = await asyncio.to_thread(read_journal, self.journal, taken)
                    await self.app.adopt(taken, folded)
                    log.info("serving partitions %s", sorted(taken))
        except Exception:
            log.exception("taking partitions %s failed", sorted(taken))
        finally:
            self.moves_done += 1


def open_journal(config: MatchmakingConfig, *, writer: bool = False) -> EventLog:
    """Matchmaking's own topic; `writer`: this instance's journal, appended through fenced partition
    writers that its partition ownership claims (embedded: the sqlite log, all of it)."""
    return config.store.open().log(
        config.topic,
        JOURNAL_FILE,
        config.partitions,
        replication=config.replication,
        writer=writer,
        claim_on_demand=False,
    )


def _scoring_log(config: MatchmakingConfig) -> EventLog | None:
    """Scoring's topic (embedded: its sqlite file, if configured) for ratings and tournament results."""
    if config.embedded and not config.scoring_file:
        return None
    return config.store.open().log(
        config.scoring_topic,
        Path(config.scoring_file).absolute(),
        config.partitions,
        replication=config.replication,
    )


def _where(config: MatchmakingConfig) -> str:
    if config.embedded:
        return f"matchmaking journal {(Path(config.data_dir) / JOURNAL_FILE).resolve()}"
    return f"matchmaking journal: Kafka {config.kafka} topic {config.topic}"


def _directory(config: MatchmakingConfig) -> OwnerDirectory | None:
    client = config.store.open(redis_timeout_s=DIRECTORY_TIMEOUT_S).redis
    return None if client is None else OwnerDirectory(client, config.key_prefix, config.topic)


async def start_matchmaking(config: MatchmakingConfig) -> RunningMatchmaking:
    """Serve, pair every `pairing_interval_ms`, and follow scoring's topic for ratings and results.

    A journal of another format (`OtherJournalFormat`) is refused before anything listens. Returns
    once this instance's first share of the partitions is folded (health turns SERVING then), or
    after SETTLE_S without it.
    """
    journal_log = await asyncio.to_thread(open_journal, config, writer=True)
    try:
        await asyncio.to_thread(check_format, journal_log, _where(config))
    except BaseException:
        journal_log.close()
        raise
    tokens = verifier(config.identity, config.tls)
    app = MatchmakingApp(
        journal_log,
        config.pairing,
        config.options,
        turn_timeout_ms=config.turn_timeout_ms,
        humans_only=config.humans_only,
        invite_ttl_s=config.invite_ttl_s,
        keep_s=config.table_keep_s,
    )
    loop = asyncio.get_running_loop()
    ownership: PartitionOwnership | None = None
    directory = _directory(config)
    if isinstance(journal_log, KafkaEventLog):
        ownership = PartitionOwnership(
            config.kafka,
            journal_log,
            config.group_id,
            directory,
            assigned=lambda parts: _from_thread(loop, running, parts, set()),
            revoked=lambda parts: _from_thread(loop, running, set(), parts),
        )
    readers: list[EventLog] = []

    async def ready() -> bool:
        if ownership is not None and (not ownership.settled.is_set() or running.pending_moves):
            return False
        for reader in readers:  # Kafka answers (embedded: nothing to wait for)
            await asyncio.to_thread(reader.end_offset, 0)
        return await keys_ready(tokens)

    if ownership is not None:
        app.claimed_elsewhere = ownership.claimed_elsewhere
    marks = ForwardMarks(forwarding_key(config.forward_secret, SERVICE_NAME))
    limits = RateLimiting(
        Limiter(config.redis, config.key_prefix),
        config.limits,
        tokens,
        services=[SERVICE_NAME],
        forwards=marks,
    )
    await keys_ready(tokens)  # fetched before the first call (a first health check may not ask yet)
    host = ServiceHost(config.address, [SERVICE_NAME], ready, tls=config.tls, limits=limits)
    owners = ownership.owner_of if ownership is not None else lambda partition: None
    router = Router(app, owners, marks, tls=config.tls)
    matchmaking_pb2_grpc.add_MatchmakingServiceServicer_to_server(
        MatchmakingServicer(app, tokens, router), host.server
    )
    running = RunningMatchmaking(config, app, host, journal_log, router, readers, ownership)
    if ownership is None:  # embedded: every partition, before serving anyone
        everything = set(range(config.partitions))
        await app.adopt(everything, await asyncio.to_thread(read_journal, journal_log, everything))
    scoring = _scoring_log(config)
    if scoring is not None:
        readers.append(scoring)

        def hand_over(record: EventRecord) -> None:
            loop.call_soon_threadsafe(app.on_scoring_record, record)

        # A group of its own per process: every start reads the ratings from the beginning of the topic.
        group = f"rummy-matchmaking.{uuid.uuid4().hex}"
        running.loops.append(ConsumerLoop(scoring, group, hand_over, name="rummy-matchmaking.ratings"))
    for consumer in running.loops:
        consumer.start()
    await host.start()
    if ownership is not None:
        ownership.start(config.advertised or host.address)
    running.pairing = asyncio.create_task(
        app.run_pairing(config.pairing_interval_ms / 1000, running.stopping)
    )
    await running.settled(SETTLE_S)
    return running


def _from_thread(
    loop: asyncio.AbstractEventLoop, running: RunningMatchmaking, taken: set[int], lost: set[int]
) -> None:
    running.moves_reported += 1
    loop.call_soon_threadsafe(_schedule, running, taken, lost)


def _schedule(running: RunningMatchmaking, taken: set[int], lost: set[int]) -> None:
    """On the loop, in the order the ownership thread reported them."""
    task = asyncio.get_running_loop().create_task(running.move(taken, lost))
    running.tasks.add(task)
    task.add_done_callback(running.tasks.discard)
