"""Starting and stopping one matchmaking instance: its log, the ratings reader, pairing, gRPC server."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from rummy.matchmaking.v1 import matchmaking_pb2, matchmaking_pb2_grpc
from rummy_service.auth import TokenIssuer
from rummy_service.consumer import ConsumerLoop
from rummy_service.server import ServiceHost
from rummy_store import EventLog, EventRecord
from rummy_store.embedded_log import EmbeddedEventLog
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.publisher import EmbeddedPublisher, KafkaPublisher, Publisher

from rummy_matchmaking.app import MatchmakingApp
from rummy_matchmaking.config import MatchmakingConfig
from rummy_matchmaking.journal import Journal, read_journal
from rummy_matchmaking.server import MatchmakingServicer

SERVICE_NAME = matchmaking_pb2.DESCRIPTOR.services_by_name["MatchmakingService"].full_name


@dataclass(slots=True)
class RunningMatchmaking:
    config: MatchmakingConfig
    app: MatchmakingApp
    host: ServiceHost
    publisher: Publisher
    logs: list[EventLog]
    loops: list[ConsumerLoop] = field(default_factory=list)
    pairing: asyncio.Task[None] | None = None
    stopping: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def address(self) -> str:
        return self.host.address

    async def stop(self) -> None:
        self.stopping.set()
        if self.pairing is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self.pairing
        await self.host.stop()
        self.app.close()
        for loop in self.loops:
            await asyncio.to_thread(loop.stop)
        for log in self.logs:
            log.close()
        self.publisher.close()


def open_publisher(config: MatchmakingConfig) -> Publisher:
    if config.embedded:
        return EmbeddedPublisher(_embedded(config))
    return KafkaPublisher(config.kafka, config.topic, config.partitions)


def _embedded(config: MatchmakingConfig) -> EmbeddedEventLog:
    data = Path(config.data_dir)
    data.mkdir(parents=True, exist_ok=True)
    return EmbeddedEventLog(data / "tables.sqlite", config.partitions)


def open_journal(config: MatchmakingConfig) -> EventLog:
    """Matchmaking's own topic, to read back what earlier instances wrote."""
    if config.embedded:
        return _embedded(config)
    return KafkaEventLog(config.kafka, config.topic, config.partitions)


def _scoring_log(config: MatchmakingConfig) -> EventLog | None:
    """Scoring's topic (embedded: its sqlite file, if configured) for ratings and tournament results."""
    if not config.embedded:
        return KafkaEventLog(config.kafka, config.scoring_topic, config.partitions)
    if not config.scoring_file:
        return None
    Path(config.scoring_file).parent.mkdir(parents=True, exist_ok=True)  # scoring may start later
    return EmbeddedEventLog(config.scoring_file, config.partitions)


def _read_back(config: MatchmakingConfig) -> Journal:
    """What earlier instances wrote; `OtherJournalFormat` for a journal this one cannot continue."""
    if config.embedded:
        where = f"matchmaking journal {(Path(config.data_dir) / 'tables.sqlite').resolve()}"
    else:
        where = f"matchmaking journal: Kafka {config.kafka} topic {config.topic}"
    with open_journal(config) as log:
        return read_journal(log, where)


async def start_matchmaking(config: MatchmakingConfig) -> RunningMatchmaking:
    """Serve, pair every `pairing_interval_ms`, and follow scoring's topic for ratings and results.

    The journal is read back first: one of another format (`OtherJournalFormat`) is refused before
    anything is opened for writing or listens.
    """
    restored = await asyncio.to_thread(_read_back, config)
    tables = open_publisher(config)
    tokens = TokenIssuer(config.token_secret)
    app = MatchmakingApp(
        tables, tokens, config.pairing, config.options, turn_timeout_ms=config.turn_timeout_ms
    )
    unpublished = app.restore(restored)  # before serving anyone
    await app.publish_restored(unpublished)
    loop = asyncio.get_running_loop()

    readers: list[EventLog] = []

    async def ready() -> bool:
        for reader in readers:  # Kafka answers (embedded: nothing to wait for)
            await asyncio.to_thread(reader.end_offset, 0)
        return True

    host = ServiceHost(config.address, [SERVICE_NAME], ready)
    matchmaking_pb2_grpc.add_MatchmakingServiceServicer_to_server(
        MatchmakingServicer(app, tokens), host.server
    )
    running = RunningMatchmaking(config, app, host, tables, readers)
    scoring = _scoring_log(config)
    if scoring is not None:
        readers.append(scoring)

        def hand_over(record: EventRecord) -> None:
            loop.call_soon_threadsafe(app.on_scoring_record, record)

        # A group of its own per process: every start reads the ratings from the beginning of the topic.
        group = f"rummy-matchmaking.{uuid.uuid4().hex}"
        running.loops.append(ConsumerLoop(scoring, group, hand_over))
    for consumer in running.loops:
        consumer.start()
    await host.start()
    running.pairing = asyncio.create_task(
        app.run_pairing(config.pairing_interval_ms / 1000, running.stopping)
    )
    return running
