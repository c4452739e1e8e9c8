"""Starting and stopping one scoring instance: its store, logs, consumer loops, outbox and gRPC server.

Kafka + Redis, or the embedded default (`config.embedded`): a `SqliteKV` in place of Redis, sqlite
logs in place of the topics. Handlers, queries and the outbox are the same code on both.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

import redis
from rummy.scoring.v1 import scoring_pb2, scoring_pb2_grpc
from rummy_service.consumer import ConsumerLoop
from rummy_service.server import ServiceHost
from rummy_store import EventLog
from rummy_store.embedded_log import EmbeddedEventLog
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.publisher import EmbeddedPublisher, KafkaPublisher, Publisher

from rummy_scoring.config import ScoringConfig
from rummy_scoring.handlers import Handlers
from rummy_scoring.outbox import OutboxRelay
from rummy_scoring.server import ScoringServicer
from rummy_scoring.sqlite_kv import SqliteKV
from rummy_scoring.store import ScoreReader, Store

SERVICE_NAME = scoring_pb2.DESCRIPTOR.services_by_name["ScoringService"].full_name


@dataclass(slots=True)
class RunningScoring:
    config: ScoringConfig
    host: ServiceHost
    handlers: Handlers
    loops: list[ConsumerLoop]
    logs: list[EventLog]
    publisher: Publisher
    client: Store
    relay: OutboxRelay

    @property
    def address(self) -> str:
        return self.host.address

    async def stop(self) -> None:
        await self.host.stop()
        for loop in self.loops:
            await asyncio.to_thread(loop.stop)
        await asyncio.to_thread(self.relay.stop)
        for log in self.logs:
            log.close()
        self.publisher.close()
        self.client.close()


def _embedded_log(path: str | Path, partitions: int) -> EmbeddedEventLog:
    Path(path).parent.mkdir(parents=True, exist_ok=True)  # the engine or matchmaking may start later
    return EmbeddedEventLog(path, partitions)


def open_stores(config: ScoringConfig) -> tuple[Store, Publisher, EventLog, EventLog]:
    """The store, scoring's topic, and the game and table logs it follows."""
    if config.embedded:
        data = Path(config.data_dir)
        data.mkdir(parents=True, exist_ok=True)
        return (
            SqliteKV(data / "scoring.sqlite"),
            EmbeddedPublisher(_embedded_log(data / "scores.sqlite", config.partitions)),
            _embedded_log(config.game_file, config.partitions),
            _embedded_log(config.tables_file, config.partitions),
        )
    return (
        redis.Redis.from_url(config.redis),
        KafkaPublisher(config.kafka, config.topic, config.partitions, replication=config.replication),
        KafkaEventLog(config.kafka, config.game_topic, config.partitions, replication=config.replication),
        KafkaEventLog(
            config.kafka, config.matchmaking_topic, config.partitions, replication=config.replication
        ),
    )


async def start_scoring(config: ScoringConfig) -> RunningScoring:
    """Join the consumer groups and serve; health is SERVING while the store and the log answer."""
    client, out, games, tables = open_stores(config)
    sources = (config.game_topic, config.matchmaking_topic)  # what a skipped record's log line names
    if config.embedded:
        sources = (config.game_file, config.tables_file)
    handlers = Handlers(client, config.key_prefix, *sources)
    relay = OutboxRelay(client, handlers.keys.outbox(), out)
    loops = [
        ConsumerLoop(games, f"{config.group}.games", handle_batch=handlers.on_game_records),
        ConsumerLoop(tables, f"{config.group}.tables", handlers.on_matchmaking_record),
    ]

    def probe() -> bool:
        client.ping()
        games.end_offset(0)
        return True

    async def ready() -> bool:
        return await asyncio.to_thread(probe)

    host = ServiceHost(config.address, [SERVICE_NAME], ready, tls=config.tls)
    scoring_pb2_grpc.add_ScoringServiceServicer_to_server(
        ScoringServicer(ScoreReader(client, config.key_prefix)), host.server
    )
    for loop in loops:
        loop.start()
    relay.start()
    await host.start()
    return RunningScoring(config, host, handlers, loops, [games, tables], out, client, relay)
