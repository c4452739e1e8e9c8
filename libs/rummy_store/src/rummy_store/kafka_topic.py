"""How the platform's Kafka topics are created: partitions, replicas, min.insync.replicas, and kept for ever.

Every topic the platform writes is a record a game's replay, a dispute or a service's restart reads
back (the games' events, matchmaking's journal, the refusals, the results), so a topic created here
keeps every record (`retention.ms` -1) instead of the broker's default week. An existing topic that
deletes records is used, with a warning that says what is lost and how to keep it.

The count given is only for a topic that does not exist yet. An existing topic keeps its own count and
readers and writers follow it (`adopt_partitions`), because a game's partition is its id's hash modulo
the topic's real count: a configured number that disagrees with the topic would send games to other
partitions. So an old 3-partition topic, or one an operator created, is used as it is, with a log line,
instead of refusing to start. Adding partitions to a topic later moves most keys (and their games) to
other partitions: choose the count up front.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from rummy_store.errors import StoreError
from rummy_store.kafka_clients import Admin, Backend, backend
from rummy_store.partitioning import DEFAULT_PARTITIONS

log = logging.getLogger("rummy_store")

RETENTION = "retention.ms"
CLEANUP = "cleanup.policy"
KEEP_FOREVER = "-1"


@dataclass(frozen=True, slots=True)
class Replication:
    """Replicas per partition and min.insync.replicas of the topics this platform creates.

    0 means "from the cluster": min(3, brokers) replicas, and min ISR 2 when there are 3 or more
    replicas (one broker may be down and every acks=all write still reaches two), else 1.
    """

    factor: int = 0
    min_insync: int = 0

    def resolve(self, brokers: int) -> tuple[int, int]:
        """(replication factor, min.insync.replicas) for a cluster of `brokers` brokers."""
        factor = self.factor or min(3, max(brokers, 1))
        min_insync = self.min_insync or (2 if factor >= 3 else 1)
        if min_insync > factor:
            raise StoreError(
                f"min.insync.replicas {min_insync} is above the replication factor {factor}: "
                "no acks=all write could succeed"
            )
        return factor, min_insync


FROM_CLUSTER = Replication()


def ensure_topic(
    bootstrap: str,
    topic: str,
    partitions: int = DEFAULT_PARTITIONS,
    replication: Replication = FROM_CLUSTER,
    *,
    compacted: bool = False,
    client: Backend | None = None,
) -> None:
    """Create the topic if missing, with `partitions` partitions and `replication`; an existing topic
    is left as it is (see the module docstring). `compacted`: each record is its key's whole state
    (identity's accounts), so the broker keeps the last record per key instead of every record.
    `client`: the Kafka backend to ask with (kafka-python when None)."""
    admin = (client or backend()).admin(bootstrap)
    try:
        factor, min_insync = replication.resolve(admin.brokers())
        configs = {
            "min.insync.replicas": str(min_insync),
            RETENTION: KEEP_FOREVER,
            **({CLEANUP: "compact"} if compacted else {}),
        }
        if admin.create_topic(topic, partitions, factor, configs):
            log.info(
                "created topic %s: %d partitions, %d replicas, min.insync.replicas %d",
                *(topic, partitions, factor, min_insync),
            )
        elif not compacted:
            _warn_if_records_expire(admin, topic)
    finally:
        admin.close()


def _warn_if_records_expire(admin: Admin, topic: str) -> None:
    value = admin.config(topic, RETENTION)
    if value is not None and value != KEEP_FOREVER:
        log.warning(
            "topic %s deletes records older than %.0f hours (retention.ms %s): games older than that "
            "cannot be replayed or disputed. Keep them: kafka-configs.sh --bootstrap-server ... --alter "
            "--entity-type topics --entity-name %s --add-config retention.ms=-1",
            *(topic, int(value) / 3_600_000, value, topic),
        )


def adopt_partitions(topic: str, bootstrap: str, configured: int, actual: set[int]) -> int:
    """The topic's real partition count, logged when it is not the configured one."""
    if len(actual) != configured:
        log.warning(
            "topic %s at %s has %d partitions, not the %d configured: using its %d (games map to the "
            "topic's partitions; changing the count would move them)",
            *(topic, bootstrap, len(actual), configured, len(actual)),
        )
    return len(actual)
