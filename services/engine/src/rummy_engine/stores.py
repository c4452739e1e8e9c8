"""Opening the event log and snapshot store the configuration names, and probing that they answer."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import redis
from rummy_store import EventLog, SnapshotStore
from rummy_store.embedded_log import EmbeddedEventLog
from rummy_store.embedded_snapshots import EmbeddedSnapshotStore
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.redis_fence import RedisWriterFence
from rummy_store.redis_snapshots import RedisSnapshotStore

from rummy_engine import codec
from rummy_engine.config import EngineConfig

_PROBE_GAME = "__health__"


@dataclass(slots=True)
class Stores:
    log: EventLog
    snapshots: SnapshotStore
    description: str
    redis: redis.Redis | None = None
    fence: RedisWriterFence | None = None  # Kafka's single-writer fence: other engines may write too

    def probe(self) -> bool:
        """True when both stores answer a read (blocking: call it from a worker thread)."""
        if self.redis is not None:
            self.redis.ping()
            self.log.end_offset(0)
        else:
            self.log.last_seq(_PROBE_GAME)
        self.snapshots.load(_PROBE_GAME)
        return True

    def check_format(self) -> None:
        """Refuse, before serving, a store another event format wrote (`codec.OtherEventFormat`).

        The first record of each partition is the oldest, so one read per partition finds a store an
        older meldstream began; a clear error at start beats a game that fails to fold on first use.
        """
        for partition in range(self.log.partitions):
            for record in self.log.read_partition(partition):
                if record.schema_version != codec.SCHEMA_VERSION:
                    raise codec.OtherEventFormat(self.description, record.schema_version)
                break

    def close(self) -> None:
        self.log.close()
        self.snapshots.close()


def open_stores(config: EngineConfig) -> Stores:
    if config.embedded:
        data = Path(config.data_dir)
        data.mkdir(parents=True, exist_ok=True)
        log = EmbeddedEventLog(data / "events.sqlite", config.partitions)
        snapshots = EmbeddedSnapshotStore(data / "snapshots.sqlite")
        return Stores(log, snapshots, f"embedded store in {data.resolve()}")
    client = redis.Redis.from_url(config.redis)
    fence = RedisWriterFence(client, config.key_prefix, lease_ms=config.lease_ms)
    kafka_log = KafkaEventLog(config.kafka, config.topic, config.partitions, fence)
    return Stores(
        kafka_log,
        RedisSnapshotStore(client, config.key_prefix),
        f"Kafka {config.kafka} topic {config.topic}, Redis {config.redis}",
        client,
        fence,
    )
