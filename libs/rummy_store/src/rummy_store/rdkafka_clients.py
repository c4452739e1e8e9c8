"""The store's Kafka clients on confluent-kafka (librdkafka): `kafka+rdkafka://` store URLs.

Same records, transactional ids and group protocol as `kafka_python_clients` (`kafka_clients` says
why that matters); librdkafka does the protocol work in C threads, so a transaction costs about a
quarter of kafka-python's CPU. What differs, and how the contract is kept:

- Callbacks (delivery reports, rebalances) run only inside `poll`/`consume`/`flush`, on the calling
  thread: a transaction's offsets are collected by the flush after its commit, the membership's
  rebalance callbacks run in `Membership.poll`, on the ownership thread, as with kafka-python.
- librdkafka hides the group generation and the heartbeat's answers. `Membership.generation` is a count
  of this member's assignments, None between a revocation (or a lost assignment: `on_lost`, its session
  expired) and the next assignment, and None while a pause is suspected: a ticker thread that did not
  run for MEMBERSHIP_LEASE_S means the process was stopped (SIGSTOP, a stall), and the member stays in
  doubt for PAUSE_DOUBT_S (1.5 s) after it wakes, three heartbeats for librdkafka to learn whether the
  group went on without it (then `on_lost`/`on_revoke` follow and a new assignment is a new generation).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from typing import Any, Final

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from confluent_kafka import Message as RdMessage
from confluent_kafka import Producer as RdProducer
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic  # type: ignore[attr-defined]

from rummy_store.errors import StoreError
from rummy_store.kafka_clients import (
    RDKAFKA,
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
_FENCED_CODES: Final = frozenset(
    {KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH}
)
ADMIN_TIMEOUT_S: Final = 10.0
PAUSE_TICK_S: Final = 0.25
PAUSE_DOUBT_S: Final = 3 * MEMBERSHIP_HEARTBEAT_MS / 1000  # three heartbeats after waking
_COMMON: Final[dict[str, Any]] = {"socket.nagle.disable": True, "log_level": 3}
# librdkafka's default partitioner is crc32; this one is Java's (and kafka-python's) murmur2 for keyed
# records. The store names every record's partition itself; this keeps a record sent without one in step.
_MURMUR2: Final = {"partitioner": "murmur2_random"}


def _left(deadline: float) -> float:
    return max(0.001, deadline - time.monotonic())


def _message(m: RdMessage) -> Message:
    headers: Any = m.headers() or []  # [(str, bytes)]: the store writes no null header values
    return Message(m.topic() or "", m.partition() or 0, m.offset() or 0, m.key(), m.value(), headers)


class RdkafkaBackend(Backend):
    name = RDKAFKA

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


def _await_partitions(client: RdProducer | Consumer, topic: str) -> set[int]:
    """The topic's partitions; a topic created an instant before can show none yet: ask again."""
    deadline = time.monotonic() + METADATA_WAIT_S
    while True:
        try:
            found = client.list_topics(topic, timeout=ADMIN_TIMEOUT_S).topics.get(topic)
        except KafkaException as exc:
            log.info("metadata of %s: %s", topic, exc)
            found = None
        if found is not None and found.error is None and found.partitions:
            return set(found.partitions)
        if time.monotonic() > deadline:
            return set()
        time.sleep(0.1)


class _Delivered:
    """Offsets (or the first error) of a transaction's records, filled by delivery callbacks."""

    def __init__(self, count: int) -> None:
        self.offsets: list[int | None] = [None] * count
        self.error: KafkaError | None = None

    def callback(self, index: int) -> Any:
        def delivered(err: KafkaError | None, message: RdMessage) -> None:
            if err is not None:
                self.error = self.error or err
            else:
                self.offsets[index] = message.offset()

        return delivered


class _TransactionalProducer(TransactionalProducer):
    def __init__(self, bootstrap: str, transactional_id: str, timeout_s: float) -> None:
        timeout_ms = int(timeout_s * 1000)
        self._producer = RdProducer(
            {
                **_COMMON,
                "bootstrap.servers": bootstrap,
                "transactional.id": transactional_id,
                "enable.idempotence": True,
                "acks": "all",
                "linger.ms": 0,
                # The next transaction's AddPartitionsToTxn is answered CONCURRENT_TRANSACTIONS until the
                # broker wrote the last one's markers (a few ms): retry soon, and never back off past
                # 20 ms (librdkafka doubles the backoff up to a second by default: 80 ms commits here).
                "retry.backoff.ms": 5,
                "retry.backoff.max.ms": 20,
                "request.timeout.ms": min(5_000, timeout_ms),
                "message.timeout.ms": timeout_ms,
                "transaction.timeout.ms": max(timeout_ms * 3, 30_000),
                **_MURMUR2,
            }
        )
        self._timeout_s = timeout_s

    def init(self) -> None:
        self._producer.init_transactions(self._timeout_s)

    def transact(self, topic: str, records: Sequence[Outgoing], deadline: float) -> list[int]:
        producer = self._producer
        producer.begin_transaction()
        delivered = _produce(producer, topic, records)
        producer.commit_transaction(_left(deadline))  # flushes: every record acknowledged first
        producer.flush(_left(deadline))  # serves the delivery callbacks, already queued
        if delivered.error is not None:
            raise KafkaException(delivered.error)
        offsets = delivered.offsets
        if any(o is None for o in offsets):
            raise StoreError("committed, but not every record's offset was reported in time")
        return [o for o in offsets if o is not None]

    def fenced(self, exc: BaseException) -> bool:
        err = exc.args[0] if isinstance(exc, KafkaException) and exc.args else None
        if not isinstance(err, KafkaError):
            return False
        # After a fence every call fails with _FATAL; the fence itself says so in its text.
        return err.code() in _FENCED_CODES or (err.fatal() and "fenced" in err.str().lower())

    def abandon(self) -> None:
        try:
            self._producer.purge(blocking=False)
            self._producer.close()
        except Exception as exc:
            log.info("closing a failed producer: %r", exc)

    def close(self, timeout_s: float) -> None:
        self._producer.flush(timeout_s)
        self._producer.close()


def _produce(producer: RdProducer, topic: str, records: Sequence[Outgoing]) -> _Delivered:
    """Queue every record on its own partition; the answer collects each one's offset as delivered."""
    delivered = _Delivered(len(records))
    for i, r in enumerate(records):
        producer.produce(
            topic,
            value=r.value,
            key=r.key,
            partition=r.partition,
            headers=list(r.headers),
            on_delivery=delivered.callback(i),
        )
    return delivered


class _Producer(Producer):
    def __init__(self, bootstrap: str) -> None:
        self._producer = RdProducer(
            {
                **_COMMON,
                "bootstrap.servers": bootstrap,
                "enable.idempotence": True,
                "acks": "all",
                "linger.ms": 0,
                **_MURMUR2,
            }
        )

    def partitions(self, topic: str) -> set[int]:
        return _await_partitions(self._producer, topic)

    def send_all(self, topic: str, records: Sequence[Outgoing], timeout_s: float) -> None:
        delivered = _produce(self._producer, topic, records)
        if self._producer.flush(timeout_s) > 0:
            raise StoreError(f"{topic}: records not acknowledged within {timeout_s:g} s")
        if delivered.error is not None:
            raise StoreError(f"{topic}: {delivered.error.str()}")

    def close(self) -> None:
        self._producer.flush(10)
        self._producer.close()


class _PartitionReader(PartitionReader):
    def __init__(self, bootstrap: str, timeout_s: float) -> None:
        self._consumer = Consumer(
            {
                **_COMMON,
                "bootstrap.servers": bootstrap,
                "group.id": "meldstream-reader",  # never joined: partitions are assigned
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
                "enable.partition.eof": True,  # the end past markers: how a read knows it is done
                "max.partition.fetch.bytes": 8 * 1024 * 1024,
                "fetch.wait.max.ms": 5,
                "socket.timeout.ms": int(timeout_s * 1000) + 1_000,
            }
        )
        self._positions: dict[int, int] = {}

    def partitions(self, topic: str) -> set[int]:
        return _await_partitions(self._consumer, topic)

    def end_offsets(self, topic: str, partitions: Sequence[int], timeout_s: float) -> dict[int, int]:
        # OFFSET_END by time: one ListOffsets request for all, at the read_committed isolation level.
        try:
            found = self._consumer.offsets_for_times(
                [TopicPartition(topic, p, -1) for p in partitions], timeout=timeout_s
            )
        except KafkaException as exc:
            raise StoreError(f"{topic}{list(partitions)}: end offsets unknown ({exc!r})") from exc
        if any(tp.error is not None or tp.offset < 0 for tp in found):
            raise StoreError(f"{topic}{list(partitions)}: end offsets unknown ({found!r})")
        return {tp.partition: tp.offset for tp in found}

    def fetch(self, topic: str, offsets: dict[int, int]) -> tuple[list[Message], dict[int, int]]:
        consumer = self._consumer
        if self._positions != offsets:  # re-position only when moved: an assign drops prefetched data
            consumer.assign([TopicPartition(topic, p, o) for p, o in offsets.items()])
            self._positions = dict(offsets)
        # librdkafka fetches in its own threads while a partition is assigned and not paused: left so
        # between reads, with fetch.wait.max.ms 5, it cost the engine more CPU than its appends. A
        # partition assigned again keeps its pause: resumed each time, not only when it stayed.
        partitions = [TopicPartition(topic, p) for p in offsets]
        consumer.resume(partitions)
        found = consumer.consume(num_messages=2_000, timeout=READ_POLL_MS / 1000)
        consumer.pause(partitions)
        messages: list[Message] = []
        for m in found:
            err, partition = m.error(), m.partition()
            if partition is None or partition not in self._positions:
                continue
            if err is None:
                messages.append(_message(m))
                self._positions[partition] = max(self._positions[partition], (m.offset() or 0) + 1)
            elif err.code() == KafkaError._PARTITION_EOF:
                self._positions[partition] = max(self._positions[partition], m.offset() or 0)
            else:
                log.info("reading %s[%d]: %s", topic, partition, err.str())
        return messages, dict(self._positions)

    def close(self) -> None:
        self._consumer.close()


class _GroupReader(GroupReader):
    def __init__(self, bootstrap: str, topic: str, group_id: str) -> None:
        self._consumer = Consumer(
            {
                **_COMMON,
                "bootstrap.servers": bootstrap,
                "group.id": group_id,
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "isolation.level": "read_committed",
                "session.timeout.ms": CONSUMER_SESSION_MS,
                "heartbeat.interval.ms": HEARTBEAT_MS,
                "partition.assignment.strategy": "range,roundrobin",
            }
        )
        if not _await_partitions(self._consumer, topic):
            self._consumer.close()
            raise StoreError(
                f"topic {topic} at {bootstrap}: no partition metadata after {METADATA_WAIT_S:g} s"
            )
        self._consumer.subscribe([topic])

    def poll(self, timeout_s: float) -> list[Message]:
        found = self._consumer.consume(num_messages=500, timeout=timeout_s)
        return [_message(m) for m in found if m.error() is None]

    def commit(self) -> None:
        try:
            self._consumer.commit(asynchronous=False)
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError._NO_OFFSET:  # nothing read since the last commit
                raise

    def close(self) -> None:
        self._consumer.close()


class _Membership(Membership):
    def __init__(self, bootstrap: str, group: str, topic: str, rebalance: Rebalance) -> None:
        self._rebalance = rebalance
        self._topic = topic
        self._generation = 0  # assignments received: what `joined` and `generation` compare
        self._stable = False  # holds an assignment, not revoked or lost since
        self._lost = False  # an assignment was lost (session expired) since the last one
        self._member = ""
        self._tick = time.monotonic()  # the pause detector's last run
        self._woke = 0.0  # when it last saw the process had been stopped
        self._closed = threading.Event()
        self._consumer = Consumer(
            {
                **_COMMON,
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "enable.auto.commit": False,
                "session.timeout.ms": MEMBERSHIP_SESSION_MS,
                "heartbeat.interval.ms": MEMBERSHIP_HEARTBEAT_MS,
                "partition.assignment.strategy": "range,roundrobin",  # kafka-python's: one group
            }
        )
        if not _await_partitions(self._consumer, topic):
            self._consumer.close()
            raise StoreError(f"topic {topic} at {bootstrap}: no partition metadata")
        self._subscribe()
        threading.Thread(target=self._ticker, name=f"pause-detector-{topic}", daemon=True).start()

    def _subscribe(self) -> None:
        self._consumer.subscribe(
            [self._topic], on_assign=self._on_assign, on_revoke=self._on_revoke, on_lost=self._on_lost
        )

    def _ticker(self) -> None:
        while not self._closed.wait(PAUSE_TICK_S):
            now = time.monotonic()
            if now - self._tick > MEMBERSHIP_LEASE_S:
                self._woke = now
            self._tick = now

    def _on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        consumer.assign(partitions)
        consumer.pause(partitions)  # membership only: the records are read by the log
        self._generation += 1
        self._stable = True
        self._rebalance.assigned({tp.partition for tp in partitions})

    def _on_revoke(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self._stable = False
        self._rebalance.revoked({tp.partition for tp in partitions})

    def _on_lost(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self._stable, self._lost = False, True
        self._rebalance.revoked({tp.partition for tp in partitions})

    def poll(self, timeout_s: float) -> None:
        self._consumer.poll(timeout_s)  # reads nothing (paused): serves the group's callbacks

    def generation(self) -> int | None:
        now = time.monotonic()
        if not self._stable or now - self._tick > MEMBERSHIP_LEASE_S or now - self._woke < PAUSE_DOUBT_S:
            return None
        return self._generation

    def joined_generation(self) -> int:
        return self._generation

    def lapsed(self) -> bool:
        member = self._consumer.memberid()
        lapsed = self._lost or bool(self._member and member != self._member)
        self._lost, self._member = False, member
        return lapsed

    def rejoin(self) -> bool:
        """librdkafka has no call to rejoin: leave the group and join again (a new member)."""
        if not self._stable:
            return False
        self._stable = False
        self._consumer.unsubscribe()
        self._subscribe()
        return True

    def close(self) -> None:
        self._closed.set()
        self._consumer.close()


class _Admin(Admin):
    def __init__(self, bootstrap: str) -> None:
        self._admin = AdminClient({**_COMMON, "bootstrap.servers": bootstrap})

    def brokers(self) -> int:
        return len(self._admin.list_topics(timeout=ADMIN_TIMEOUT_S).brokers)

    def create_topic(self, topic: str, partitions: int, factor: int, configs: dict[str, str]) -> bool:
        new = NewTopic(topic, num_partitions=partitions, replication_factor=factor, config=configs)
        try:
            self._admin.create_topics([new], operation_timeout=ADMIN_TIMEOUT_S)[topic].result()
        except KafkaException as exc:
            if exc.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS:
                return False
            raise
        return True

    def config(self, topic: str, name: str) -> str | None:
        resource = ConfigResource("topic", topic)
        entries = self._admin.describe_configs([resource], request_timeout=ADMIN_TIMEOUT_S)[resource].result()
        entry = entries.get(name)
        return None if entry is None else str(entry.value)

    def partition_count(self, topic: str) -> int | None:
        found = self._admin.list_topics(timeout=ADMIN_TIMEOUT_S).topics.get(topic)
        if found is None or found.error is not None or not found.partitions:
            return None
        return len(found.partitions)

    def close(self) -> None:
        """An admin client holds no session to end: librdkafka closes it when it is collected."""
