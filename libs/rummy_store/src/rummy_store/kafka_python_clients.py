"""The store's Kafka clients on kafka-python 3.0.12, the default (`kafka_clients` says what each does)."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from kafka import ConsumerRebalanceListener, KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka import errors as kafka_errors
from kafka.admin import ConfigResource, ConfigResourceType
from kafka.coordinator.base import MemberState

from rummy_store import kafka_fixes  # noqa: F401  (kafka-python's selector, fixed before first use)
from rummy_store.errors import StoreError
from rummy_store.kafka_clients import (
    KAFKA_PYTHON,
    Admin,
    Backend,
    GroupReader,
    Membership,
    Message,
    Outgoing,
    PartitionReader,
    Producer,
    Rebalance,
    TransactionalProducer,
)
from rummy_store.kafka_settings import (
    CONSUMER_SESSION_MS,
    HEARTBEAT_MS,
    MEMBERSHIP_HEARTBEAT_MS,
    MEMBERSHIP_LEASE_S,
    MEMBERSHIP_SESSION_MS,
    METADATA_WAIT_S,
    READ_POLL_MS,
)

log = logging.getLogger("rummy_store")
_FENCED = (kafka_errors.ProducerFencedError, kafka_errors.InvalidProducerEpochError)


class KafkaPythonBackend(Backend):
    name = KAFKA_PYTHON

    def transactional_producer(
        self, bootstrap: str, transactional_id: str, timeout_s: float
    ) -> TransactionalProducer:
        return _TransactionalProducer(bootstrap, transactional_id, timeout_s)

    def producer(self, bootstrap: str) -> Producer:
        return _Producer(bootstrap)

    def partition_reader(self, bootstrap: str, timeout_s: float) -> PartitionReader:
        return _PartitionReader(bootstrap, timeout_s)

    def group_reader(self, bootstrap: str, topic: str, group_id: str) -> GroupReader:
        return _GroupReader(bootstrap, topic, group_id)

    def membership(self, bootstrap: str, group: str, topic: str, rebalance: Rebalance) -> Membership:
        return _Membership(bootstrap, group, topic, rebalance)

    def admin(self, bootstrap: str) -> Admin:
        return _Admin(bootstrap)


def await_partitions(consumer: KafkaConsumer | KafkaProducer, topic: str) -> set[int]:
    """The topic's partitions as the client's metadata shows them. Just after a topic is created the
    broker can answer with none yet (a bench run died on `partitions set()`; a group member joining
    then is assigned nothing), and the client caches that empty answer: refresh the metadata until
    partitions show, for up to METADATA_WAIT_S; empty after that."""
    deadline = time.monotonic() + METADATA_WAIT_S
    if isinstance(consumer, KafkaProducer):
        producer = consumer
        while not (actual := producer.partitions_for(topic)) and time.monotonic() < deadline:
            time.sleep(0.1)
            producer._metadata.request_update()
        return set(actual or ())
    actual = consumer.partitions_for_topic(topic)
    while not actual and time.monotonic() < deadline:
        time.sleep(0.1)
        consumer.topics()  # a metadata request for every topic, this one included
        actual = consumer.partitions_for_topic(topic)
    return set(actual or ())


def _message(record: Any) -> Message:
    return Message(record.topic, record.partition, record.offset, record.key, record.value, record.headers)


class _TransactionalProducer(TransactionalProducer):
    def __init__(self, bootstrap: str, transactional_id: str, timeout_s: float) -> None:
        timeout_ms = int(timeout_s * 1000)
        self._producer = KafkaProducer(
            bootstrap_servers=bootstrap,
            transactional_id=transactional_id,
            acks="all",
            linger_ms=0,
            # The next transaction's AddPartitionsToTxn is answered CONCURRENT_TRANSACTIONS until the
            # broker has written the last one's markers (a few ms): retry soon, not after 100 ms.
            retry_backoff_ms=5,
            request_timeout_ms=min(5_000, timeout_ms),
            delivery_timeout_ms=timeout_ms,
            max_block_ms=timeout_ms,
            transaction_timeout_ms=max(timeout_ms * 3, 30_000),
            # Its sensors are recorded on every request and batch, and nothing reads them: 20-30 % of
            # a transaction's CPU (begin, produce, commit) measured on this box.
            metrics_enabled=False,
        )

    def init(self) -> None:
        self._producer.init_transactions()

    def transact(self, topic: str, records: Sequence[Outgoing], deadline: float) -> list[int]:
        producer = self._producer
        producer.begin_transaction()
        futures = [
            producer.send(topic, key=r.key, value=r.value, partition=r.partition, headers=r.headers)
            for r in records
        ]
        # No flush first: the producer sends EndTxn only once every record of the transaction is
        # acknowledged (a failed one fails the commit), so its sender thread goes from the produce
        # answer to the commit without handing back to this thread in between.
        # `commit_transaction` with a bound: kafka-python's waits forever for a broker that went away.
        result = producer._transaction_manager.begin_commit()
        producer._sender.wakeup()
        if not result.wait(timeout_ms=int(_left(deadline) * 1000)):
            raise kafka_errors.KafkaTimeoutError("commit not acknowledged in time")
        return [int(f.get(timeout=_left(deadline)).offset) for f in futures]

    def fenced(self, exc: BaseException) -> bool:
        # A fence can surface as another error (an EndTxn refused after AddPartitionsToTxn was fenced):
        # the transaction manager keeps the error that made it fail.
        return isinstance(exc, _FENCED) or isinstance(self._producer._transaction_manager.last_error, _FENCED)

    def abandon(self) -> None:
        try:
            self._producer.close(timeout=0)
        except Exception as exc:
            log.info("closing a failed producer: %r", exc)

    def close(self, timeout_s: float) -> None:
        self._producer.close(timeout=timeout_s)


class _Producer(Producer):
    def __init__(self, bootstrap: str) -> None:
        self._producer = KafkaProducer(
            bootstrap_servers=bootstrap, acks="all", enable_idempotence=True, linger_ms=0
        )

    def partitions(self, topic: str) -> set[int]:
        return await_partitions(self._producer, topic)

    def send_all(self, topic: str, records: Sequence[Outgoing], timeout_s: float) -> None:
        futures = [
            self._producer.send(topic, key=r.key, value=r.value, partition=r.partition, headers=r.headers)
            for r in records
        ]
        for future in futures:
            future.get(timeout=timeout_s)

    def close(self) -> None:
        self._producer.close()


class _PartitionReader(PartitionReader):
    def __init__(self, bootstrap: str, timeout_s: float) -> None:
        # Reads scan one partition at a time (catch-up, rebuilds): fetch more of it per round trip, and
        # never wait at a partition's end for more (a read stops at the end it saw when it began).
        self._consumer = KafkaConsumer(
            bootstrap_servers=bootstrap,
            enable_auto_commit=False,
            group_id=None,
            isolation_level="read_committed",
            max_partition_fetch_bytes=8 * 1024 * 1024,
            fetch_max_wait_ms=5,
            request_timeout_ms=int(timeout_s * 1000) + 1_000,
        )

    def partitions(self, topic: str) -> set[int]:
        return await_partitions(self._consumer, topic)

    def end_offsets(self, topic: str, partitions: Sequence[int], timeout_s: float) -> dict[int, int]:
        tps = [TopicPartition(topic, p) for p in partitions]
        try:
            ends = self._consumer.end_offsets(tps, timeout_ms=int(timeout_s * 1000))
        except kafka_errors.KafkaError as exc:
            raise StoreError(f"{topic}{list(partitions)}: end offsets unknown ({exc!r})") from exc
        return {tp.partition: int(end) for tp, end in ends.items()}

    def fetch(self, topic: str, offsets: dict[int, int]) -> tuple[list[Message], dict[int, int]]:
        consumer = self._consumer
        tps = {p: TopicPartition(topic, p) for p in offsets}
        # Re-position only when another read moved the reader: a seek drops prefetched data.
        if consumer.assignment() != set(tps.values()) or any(
            consumer.position(tps[p]) != o for p, o in offsets.items()
        ):
            consumer.assign(list(tps.values()))
            for partition, offset in offsets.items():
                consumer.seek(tps[partition], offset)
        batches = consumer.poll(timeout_ms=READ_POLL_MS, max_records=2_000)
        positions = {p: consumer.position(tp) for p, tp in tps.items()}
        messages = [_message(m) for records in batches.values() for m in records]
        return messages, {p: int(at) for p, at in positions.items() if at is not None}

    def close(self) -> None:
        self._consumer.close()


class _GroupReader(GroupReader):
    """A member of a Kafka consumer group (classic protocol): partitions are split between members."""

    def __init__(self, bootstrap: str, topic: str, group_id: str) -> None:
        self._consumer = KafkaConsumer(
            topic,
            bootstrap_servers=bootstrap,
            group_id=group_id,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            isolation_level="read_committed",
            session_timeout_ms=CONSUMER_SESSION_MS,
            heartbeat_interval_ms=HEARTBEAT_MS,
        )
        # The group is joined at the first poll: a leader whose metadata shows no partitions of the topic
        # then assigns nothing until its next metadata refresh (minutes; seen in the platform e2e).
        if not await_partitions(self._consumer, topic):
            self._consumer.close()
            raise StoreError(
                f"topic {topic} at {bootstrap}: no partition metadata after {METADATA_WAIT_S:g} s"
            )

    def poll(self, timeout_s: float) -> list[Message]:
        batches = self._consumer.poll(timeout_ms=int(timeout_s * 1000))
        return [_message(m) for messages in batches.values() for m in messages]

    def commit(self) -> None:
        self._consumer.commit()

    def close(self) -> None:
        self._consumer.close()


class _Listener(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, membership: _Membership) -> None:
        self._membership = membership

    def on_partitions_revoked(self, revoked: list[TopicPartition]) -> None:
        self._membership.rebalance.revoked({tp.partition for tp in revoked})

    def on_partitions_assigned(self, assigned: list[TopicPartition]) -> None:
        self._membership.consumer.pause(*assigned)  # membership only: the records are read by the log
        self._membership.rebalance.assigned({tp.partition for tp in assigned})


class _Membership(Membership):
    def __init__(self, bootstrap: str, group: str, topic: str, rebalance: Rebalance) -> None:
        self.rebalance = rebalance
        self._member: tuple[str, int] | None = None  # (member id, generation) of the last assignment
        self.consumer = KafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=group,
            enable_auto_commit=False,
            session_timeout_ms=MEMBERSHIP_SESSION_MS,
            heartbeat_interval_ms=MEMBERSHIP_HEARTBEAT_MS,
        )
        # Joined with no partitions in its metadata yet (a topic just created), the group would first
        # assign nothing, and the instance would look settled while owning nothing.
        if not await_partitions(self.consumer, topic):
            self.consumer.close()
            raise StoreError(f"topic {topic} at {bootstrap}: no partition metadata")
        self.consumer.subscribe(topics=[topic], listener=_Listener(self))

    def poll(self, timeout_s: float) -> None:
        self.consumer.poll(timeout_ms=int(timeout_s * 1000))

    def generation(self) -> int | None:
        """Read from kafka-python's coordinator (3.0.12), whose attributes are swapped whole, so a read
        from another thread sees a consistent value; tests/e2e/test_split_brain.py pins the behaviour."""
        coordinator = self.consumer._coordinator
        if coordinator.state is not MemberState.STABLE or coordinator.rejoin_needed:
            return None
        if coordinator.coordinator_id is None:  # marked dead, e.g. on waking past the session
            return None
        # The last answer, not the last reset: kafka-python resets its timers when it marks the
        # coordinator dead, before it learns the member is gone.
        if time.monotonic() - coordinator.heartbeat.last_receive > MEMBERSHIP_LEASE_S:
            return None
        generation: int = coordinator._generation.generation_id
        return generation

    def joined_generation(self) -> int:
        generation: int = self.consumer._coordinator._generation.generation_id
        return generation

    def lapsed(self) -> bool:
        current = self.consumer._coordinator._generation
        previous, self._member = self._member, (current.member_id, current.generation_id)
        if previous is None:
            return False
        member_id, generation = previous
        if current.member_id == member_id and current.generation_id == generation + 1:
            return False
        log.info(
            "membership went from generation %d to %d (member %s)",
            *(generation, current.generation_id, "the same" if current.member_id == member_id else "new"),
        )
        return True

    def rejoin(self) -> bool:
        coordinator = self.consumer._coordinator
        if coordinator.rejoin_needed:
            return False
        coordinator.request_rejoin()
        return True

    def close(self) -> None:
        self.consumer.close()


class _Admin(Admin):
    def __init__(self, bootstrap: str) -> None:
        self._admin = KafkaAdminClient(bootstrap_servers=bootstrap)

    def brokers(self) -> int:
        return len(self._admin.describe_cluster()["brokers"])

    def create_topic(self, topic: str, partitions: int, factor: int, configs: dict[str, str]) -> bool:
        spec = {"num_partitions": partitions, "replication_factor": factor, "configs": configs}
        try:
            self._admin.create_topics({topic: spec})
        except kafka_errors.TopicAlreadyExistsError:
            return False
        return True

    def config(self, topic: str, name: str) -> str | None:
        resource = ConfigResource(ConfigResourceType.TOPIC, topic, {name: None})
        described = self._admin.describe_configs([resource], config_filter="all")
        value: str | None = described.get("topic", {}).get(topic, {}).get(name, {}).get("value")
        return value

    def partition_count(self, topic: str) -> int | None:
        for described in self._admin.describe_topics([topic]):
            if described.get("error_code") == 0 and described.get("partitions"):
                return len(described["partitions"])
        return None

    def close(self) -> None:
        self._admin.close()


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())
