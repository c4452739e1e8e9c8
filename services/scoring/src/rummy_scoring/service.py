"""Starting and stopping one scoring instance: its store, logs, consumer loops, outbox and gRPC server.

Kafka + Redis, or the embedded default (`config.embedded`): a `SqliteKV` in place of Redis, sqlite
logs in place of the topics, as `config.store` opens them. Handlers, queries and the outbox are the
same code on both.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from rummy.scoring.v1 import scoring_pb2, scoring_pb2_grpc
from rummy_service.consumer import ConsumerLoop
from rummy_service.rate_limits import Limiter, RateLimiting
from rummy_service.server import ServiceHost
from rummy_store import EventLog
from rummy_store.publisher import Publisher

from rummy_scoring.config import ScoringConfig
from rummy_scoring.handlers import Handlers
from rummy_scoring.outbox import OutboxRelay
from rummy_scoring.server import ScoringServicer
from rummy_scoring.store import ScoreReader, Store

SERVICE_NAME = scoring_pb2.DESCRIPTOR.services_by_name["ScoringService"].full_name
STATE_FILE: Final = "scoring.sqlite"  # on the embedded store: its keys (Redis on Kafka)
SCORES_FILE: Final = "scores.sqlite"  # on the embedded store: its published events


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


def open_stores(config: ScoringConfig) -> tuple[Store, Publisher, EventLog, EventLog]:
    """The store, scoring's topic, and the game and table logs it follows (embedded: the engine's and
    matchmaking's files, wherever `game_file` and `tables_file` say)."""
    store, parts, replication = config.store.open(), config.partitions, config.replication
    return (
        store.key_value(STATE_FILE),
        store.publisher(config.topic, SCORES_FILE, parts, replication=replication),
        store.log(config.game_topic, Path(config.game_file).absolute(), parts, replication=replication),
        store.log(
            config.matchmaking_topic, Path(config.tables_file).absolute(), parts, replication=replication
        ),
    )


async def start_scoring(config: ScoringConfig) -> RunningScoring:
    """Join the consumer groups and serve; health is SERVING while the store and the log answer."""
    client, out, games, tables = open_stores(config)
    sources = (config.game_topic, config.matchmaking_topic)  # what a skipped record's log line names
    if config.embedded:
        sources = (config.game_file, config.tables_file)
    handlers = Handlers(client, config.key_prefix, *sources, aliases=config.legacy_ids)
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

    limits = RateLimiting(
        Limiter(config.redis, config.key_prefix), config.limits, None, services=[SERVICE_NAME]
    )
    host = ServiceHost(config.address, [SERVICE_NAME], ready, tls=config.tls, limits=limits)
    scoring_pb2_grpc.add_ScoringServiceServicer_to_server(
        ScoringServicer(ScoreReader(client, config.key_prefix)), host.server
    )
    for loop in loops:
        loop.start()
    relay.start()
    await host.start()
    return RunningScoring(config, host, handlers, loops, [games, tables], out, client, relay)
