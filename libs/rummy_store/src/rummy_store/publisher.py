"""Publishing derived events (matchmaking's tables, scoring's results) without a per-key writer lease.

`KafkaEventLog.append` checks a game's sequence under a Redis lease, and a key it has not seen before
costs a scan of its partition: right for a game's own history, quadratic for a stream of new keys.
Derived events need neither: their consumers are idempotent (a TableFormed creates a game once, a
result is counted once), so a `Publisher` only writes records in the log's format (same key and
headers), which `EventLog.subscribe` and `read_partition` read like any other.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence

from rummy_store.embedded_log import EmbeddedEventLog
from rummy_store.errors import StoreError
from rummy_store.event_log import validate_append
from rummy_store.kafka_clients import KAFKA_PYTHON, Outgoing, backend
from rummy_store.kafka_records import headers
from rummy_store.kafka_settings import METADATA_WAIT_S
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
        client: str = KAFKA_PYTHON,
    ) -> None:
        clients = backend(client)
        ensure_topic(bootstrap, topic, partitions, replication, client=clients)
        self._topic = topic
        self._producer = clients.producer(bootstrap)
        actual = self._producer.partitions(topic)
        if not actual:
            self._producer.close()
            raise StoreError(f"topic {topic}: no partition metadata after {METADATA_WAIT_S:g} s")
        self._partitions = adopt_partitions(topic, bootstrap, partitions, actual)

    def publish(self, key: str, command_id: str, first_seq: int, events: Sequence[NewEvent]) -> None:
        self.publish_all([(key, command_id, first_seq, events)])

    def publish_all(self, batch: Sequence[tuple[str, str, int, Sequence[NewEvent]]]) -> None:
        """Send every record of the batch, then wait for all acknowledgements (one round, not one each)."""
        for key, command_id, first_seq, events in batch:
            validate_append(key, command_id, first_seq - 1, events)
        records = [
            Outgoing(
                partition_for(key, self._partitions),
                key.encode(),
                event.payload,
                headers(event, first_seq + i, command_id),
            )
            for key, command_id, first_seq, events in batch
            for i, event in enumerate(events)
        ]
        self._producer.send_all(self._topic, records, timeout_s=30)

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
