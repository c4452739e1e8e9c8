"""Opening the event log and snapshot store the configuration names, and probing that they answer."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import redis
from rummy_contracts.event_format import check_format
from rummy_store import EventLog, SnapshotStore, StoreError
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.locations import redacted

from rummy_engine.config import EngineConfig

log = logging.getLogger("rummy_engine")
_PROBE_GAME = "__health__"
EVENTS_FILE: Final = "events.sqlite"  # the game log, on the embedded store
SNAPSHOTS_FILE: Final = "snapshots.sqlite"


@dataclass(slots=True)
class Stores:
    log: EventLog
    snapshots: SnapshotStore
    description: str
    redis: redis.Redis | None = None
    kafka: KafkaEventLog | None = None  # the same log as `log`, on Kafka: partitions are claimed
    cache_failure: str | None = None  # why Redis (on Kafka, a cache) did not answer the last probe

    def probe(self) -> bool:
        """True when the log answers a read and every owned partition can be written (blocking).

        On Kafka, Redis holds only caches and hints (snapshots, partition checkpoints, the owners
        directory): the engine serves without it, so Redis being down is logged (when it goes and when
        it comes back), not NOT_SERVING. The embedded snapshot store is a file beside the log: failing
        to read it fails the probe.
        """
        if self.kafka is None:
            self.log.last_seq(_PROBE_GAME)
            self.snapshots.load(_PROBE_GAME)
            return True
        failures = self.kafka.writer_failures()
        if failures:
            log.warning("not ready: %s", "; ".join(failures))
            return False
        self.kafka.end_offset(0)
        try:
            self.snapshots.load(_PROBE_GAME)
        except StoreError as exc:
            if self.cache_failure is None:
                log.warning(
                    "snapshot store does not answer (%s): serving from the log alone until it does", exc
                )
            self.cache_failure = str(exc)
        else:
            if self.cache_failure is not None:
                log.info("snapshot store answers again: snapshots and checkpoints resume")
            self.cache_failure = None
        return True

    def check_format(self) -> None:
        """Refuse, before serving, a store another event format wrote (`OtherEventFormat`).

        The first record of each partition is the oldest, so one read per partition finds a store an
        older meldstream began; a clear error at start beats a game that fails to fold on first use.
        """
        for partition in range(self.log.partitions):
            for record in self.log.read_partition(partition):
                check_format(record, self.description)
                break

    def close(self) -> None:
        self.log.close()
        self.snapshots.close()


def open_stores(config: EngineConfig) -> Stores:
    """The game log and snapshots at `config.store`; on Kafka, every call bounded by the store timeout
    (a Redis that went away answers UNAVAILABLE in seconds, not at the client's deadline)."""
    store = config.store.open(redis_timeout_s=config.store_timeout_s)
    log = store.log(
        config.topic,
        EVENTS_FILE,
        config.partitions,
        replication=config.replication,
        writer=True,
        claim_on_demand=False,  # the consumer group says which fence groups this engine owns
        fence_groups=config.fence_groups,
        checkpoints=store.checkpoints(config.key_prefix),
        timeout_s=config.store_timeout_s,
    )
    snapshots = store.snapshots(config.key_prefix, SNAPSHOTS_FILE)
    if isinstance(log, KafkaEventLog):
        description = f"Kafka {config.kafka} topic {config.topic}, Redis {redacted(config.redis)}"
        return Stores(log, snapshots, description, store.redis, log)
    return Stores(log, snapshots, f"embedded store in {Path(config.data_dir).resolve()}")
