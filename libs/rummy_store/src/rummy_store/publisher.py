"""Publishing derived events (matchmaking's tables, scoring's results) without a per-key writer lease.

`KafkaEventLog.append` checks a game's sequence under a Redis lease, and a key it has not seen before
costs a scan of its partition: right for a game's own history, quadratic for a stream of new keys.
Derived events need neither: their consumers are idempotent (a TableFormed creates a game once, a
result is counted once), so a `Publisher` only writes records in the log's format (same key and
headers), which `EventLog.subscribe` and `read_partition` read like any other.
"""

from __future__ import annotations

import abc
import time
from collections.abc import Sequence
from typing import Any

from kafka import KafkaProducer

from rummy_store.embedded_log import EmbeddedEventLog
from rummy_store.errors import StoreError
from rummy_store.event_log import validate_append
from rummy_store.kafka_log import METADATA_WAIT_S
from rummy_store.kafka_topic import FROM_CLUSTER, Replication, adopt_partitions, ensure_topic
from rummy_store.partitioning import DEFAULT_PARTITIONS, partition_for
from rummy_store.records import NewEvent


class Publisher(abc.ABC):
    """Appends events under a key; `first_seq` numbers them (the caller's own count for the key)."""

    @abc.abstractmethod
    def publish(self, key: str, command_id: str, first_seq: int, events: Sequence[NewEvent]) -> None: ...

    def publish_all(self, batch: Sequence[tuple[str, str, int, Sequence[NewEvent]]]) -> None:
        """Publish several (key, command id, first seq, events) calls; backends may overlap them."""
        for key, command_id, first_seq, events in batch:
            self.publish(key, command_id, first_seq, events)

    @abc.abstractmethod
    def close(self) -> None: ...


class KafkaPublisher(Publisher):
    """acks=all, idempotent producer; blocks until every record of the call is acknowledged. Keys map
    to the topic's own partition count, as `KafkaEventLog`'s do (`partitions` only creates a topic)."""

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        partitions: int = DEFAULT_PARTITIONS,
        *,
        replication: Replication = FROM_CLUSTER,
    ) -> None:
        ensure_topic(bootstrap, topic, partitions, replication)
        self._topic = topic
        self._producer = KafkaProducer(
            bootstrap_servers=bootstrap, acks="all", enable_idempotence=True, linger_ms=0
        )
        self._partitions = adopt_partitions(topic, bootstrap, partitions, self._topic_partitions())

    def _topic_partitions(self) -> set[int]:
        """The topic's partitions from the producer's metadata; a topic created an instant before can
        show none yet (as `await_partitions` says), so ask again for up to METADATA_WAIT_S."""
        deadline = time.monotonic() + METADATA_WAIT_S
        while not (actual := self._producer.partitions_for(self._topic)) and time.monotonic() < deadline:
            time.sleep(0.1)
            self._producer._metadata.request_update()
        if not actual:
            self._producer.close()
            raise StoreError(f"topic {self._topic}: no partition metadata after {METADATA_WAIT_S:g} s")
        return set(actual)

    def publish(self, key: str, command_id: str, first_seq: int, events: Sequence[NewEvent]) -> None:
        self.publish_all([(key, command_id, first_seq, events)])

    def publish_all(self, batch: Sequence[tuple[str, str, int, Sequence[NewEvent]]]) -> None:
        """Send every record of the batch, then wait for all acknowledgements (one round, not one each)."""
        for key, command_id, first_seq, events in batch:
            validate_append(key, command_id, first_seq - 1, events)
        futures = [
            f
            for key, command_id, first_seq, events in batch
            for f in self._send(key, command_id, first_seq, events)
        ]
        for future in futures:
            future.get(timeout=30)

    def _send(self, key: str, command_id: str, first_seq: int, events: Sequence[NewEvent]) -> list[Any]:
        return [
            self._producer.send(
                self._topic,
                key=key.encode(),
                value=event.payload,
                partition=partition_for(key, self._partitions),
                headers=[
                    ("event-type", event.event_type.encode()),
                    ("schema-version", str(event.schema_version).encode()),
                    ("seq", str(first_seq + i).encode()),
                    ("command-id", command_id.encode()),
                ],
            )
            for i, event in enumerate(events)
        ]

    def close(self) -> None:
        self._producer.close()


class EmbeddedPublisher(Publisher):
    """The embedded log as a publisher: its append is indexed, so the seq check costs nothing here."""

    def __init__(self, log: EmbeddedEventLog) -> None:
        self._log = log

    def publish(self, key: str, command_id: str, first_seq: int, events: Sequence[NewEvent]) -> None:
        self._log.append(key, command_id, first_seq - 1, events)

    def close(self) -> None:
        self._log.close()
