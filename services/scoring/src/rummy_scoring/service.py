"""Starting and stopping one scoring instance: Kafka logs, Redis, consumer loops, gRPC server."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import redis
from rummy.scoring.v1 import scoring_pb2, scoring_pb2_grpc
from rummy_service.consumer import ConsumerLoop
from rummy_service.server import ServiceHost
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.publisher import KafkaPublisher

from rummy_scoring.config import ScoringConfig
from rummy_scoring.handlers import Handlers
from rummy_scoring.outbox import OutboxRelay
from rummy_scoring.server import ScoringServicer
from rummy_scoring.store import ScoreReader

SERVICE_NAME = scoring_pb2.DESCRIPTOR.services_by_name["ScoringService"].full_name


@dataclass(slots=True)
class RunningScoring:
    config: ScoringConfig
    host: ServiceHost
    loops: list[ConsumerLoop]
    logs: list[KafkaEventLog]
    publisher: KafkaPublisher
    client: redis.Redis
    relay: OutboxRelay

    @property
    def address(self) -> str:
        return f"{self.config.address.rsplit(':', 1)[0]}:{self.host.port}"

    async def stop(self) -> None:
        await self.host.stop()
        for loop in self.loops:
            await asyncio.to_thread(loop.stop)
        await asyncio.to_thread(self.relay.stop)
        for log in self.logs:
            log.close()
        self.publisher.close()
        self.client.close()


async def start_scoring(config: ScoringConfig) -> RunningScoring:
    """Join the consumer groups and serve; health is SERVING while Redis and Kafka answer."""
    client = redis.Redis.from_url(config.redis)
    out = KafkaPublisher(config.kafka, config.topic, config.partitions)
    games = KafkaEventLog(config.kafka, config.game_topic, config.partitions)
    tables = KafkaEventLog(config.kafka, config.matchmaking_topic, config.partitions)
    handlers = Handlers(client, config.key_prefix)
    relay = OutboxRelay(client, handlers.keys.outbox(), out)
    loops = [
        ConsumerLoop(games, f"{config.group}.games", handlers.on_game_record),
        ConsumerLoop(tables, f"{config.group}.tables", handlers.on_matchmaking_record),
    ]

    def probe() -> bool:
        client.ping()
        games.end_offset(0)
        return True

    async def ready() -> bool:
        return await asyncio.to_thread(probe)

    host = ServiceHost(config.address, [SERVICE_NAME], ready)
    scoring_pb2_grpc.add_ScoringServiceServicer_to_server(
        ScoringServicer(ScoreReader(client, config.key_prefix)), host.server
    )
    for loop in loops:
        loop.start()
    relay.start()
    await host.start()
    return RunningScoring(config, host, loops, [games, tables], out, client, relay)
