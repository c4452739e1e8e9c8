"""The Kafka event log: topic ``rummy.game.events.v1`` keyed by game id, idempotent producer, acks=all.

Record key = game id (so one game stays in one partition, in order), value = serialized envelope,
headers = event type, schema version, seq and command id (so readers filter without parsing payloads).
Appends go through a ``RedisWriterFence`` (see there for the single-writer rule); within this process a
per-game lock keeps reserve and produce of one game in order.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import Any

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import TopicAlreadyExistsError

from rummy_store.errors import ConcurrencyError, NotWriterError, StoreError
from rummy_store.event_log import TOPIC, EventLog, Subscription, validate_append
from rummy_store.records import AppendResult, EventRecord, LogPosition, NewEvent
from rummy_store.redis_fence import CommandRecord, RedisWriterFence

# A consumer that joins a group with the 45 s default can stall when members join together
# (shared/notes/infra.md section 3); 10 s keeps rebalances short.
CONSUMER_TIMEOUTS: dict[str, Any] = {"session_timeout_ms": 10_000, "heartbeat_interval_ms": 1_000}
# How long a log waits at construction for a just-created topic's partitions to show in the metadata.
METADATA_WAIT_S = 30.0


def ensure_topic(bootstrap: str, topic: str = TOPIC, partitions: int = 3) -> None:
    """Create the topic if missing; an existing topic must have ``partitions`` partitions."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(topic, partitions, 1)])
    except TopicAlreadyExistsError:
        pass
    finally:
        admin.close()


def _await_partitions(consumer: KafkaConsumer, topic: str) -> set[int]:
    """The topic's partitions as the consumer's metadata shows them. Just after a topic is created the
    broker can answer with none yet (a bench run died on `partitions set()`; a group member joining
    then is assigned nothing), and the client caches that empty answer: refresh the metadata until
    partitions show, for up to METADATA_WAIT_S; empty after that."""
    deadline = time.monotonic() + METADATA_WAIT_S
    actual = consumer.partitions_for_topic(topic)
    while not actual and time.monotonic() < deadline:
        time.sleep(0.1)
        consumer.topics()  # a metadata request for every topic, this one included
        actual = consumer.partitions_for_topic(topic)
    return set(actual)


def _no_partitions(topic: str, bootstrap: str) -> StoreError:
    return StoreError(f"topic {topic} at {bootstrap}: no partition metadata after {METADATA_WAIT_S:g} s")


def _record(message: Any) -> EventRecord:
    headers = {key: value.decode() for key, value in message.headers}
    return EventRecord(
        game_id=message.key.decode(),
        seq=int(headers["seq"]),
        command_id=headers["command-id"],
        event_type=headers["event-type"],
        schema_version=int(headers["schema-version"]),
        payload=message.value,
        position=LogPosition(message.partition, message.offset),
    )


class KafkaEventLog(EventLog):
    """Event log on a Kafka topic. Without a fence it is read-only (catch-up readers, projections)."""

    def __init__(
        self, bootstrap: str, topic: str = TOPIC, partitions: int = 3, fence: RedisWriterFence | None = None
    ) -> None:
        ensure_topic(bootstrap, topic, partitions)
        self._bootstrap = bootstrap
        self._topic = topic
        self._fence = fence
        self.partitions = partitions
        # Reads scan one partition at a time (catch-up, rebuilds): fetch more of it per round trip.
        self._reader = KafkaConsumer(
            bootstrap_servers=bootstrap,
            enable_auto_commit=False,
            group_id=None,
            max_partition_fetch_bytes=8 * 1024 * 1024,
        )
        actual = _await_partitions(self._reader, topic)
        if len(actual) != partitions:
            self._reader.close()
            if not actual:
                raise _no_partitions(topic, bootstrap)
            raise ValueError(
                f"topic {topic} at {bootstrap} has partitions {sorted(actual)}, expected {partitions}"
            )
        self._reader_lock = threading.Lock()
        self._producer: KafkaProducer | None = None
        self._delivery_s = 0.0
        if fence is not None:
            # acks=all + idempotence: no loss, no broker-side duplicates on retry. The delivery timeout is
            # kept well under the lease so a produce cannot land after the lease has passed on.
            delivery_ms = max(1_000, fence.lease_ms // 3)
            self._delivery_s = delivery_ms / 1000
            self._producer = KafkaProducer(
                bootstrap_servers=bootstrap,
                acks="all",
                enable_idempotence=True,
                linger_ms=0,
                request_timeout_ms=min(5_000, delivery_ms),
                delivery_timeout_ms=delivery_ms,
                max_block_ms=delivery_ms,
            )
        self._game_locks: defaultdict[str, threading.Lock] = defaultdict(threading.Lock)
        self._tokens: dict[str, int] = {}

    # -- writing -------------------------------------------------------------------------------------

    def append(
        self, game_id: str, command_id: str, expected_seq: int, events: Sequence[NewEvent]
    ) -> AppendResult:
        validate_append(game_id, command_id, expected_seq, events)
        fence, producer = self._fence, self._producer
        if fence is None or producer is None:
            raise NotWriterError("this KafkaEventLog has no writer fence: it is read-only")
        with self._game_locks[game_id]:
            # A held lease is renewed by the reserve itself; only a missing or lapsed one costs an acquire.
            cached = self._tokens.get(game_id)
            token = cached if cached is not None else self._lease(fence, game_id)
            reservation = fence.reserve(game_id, token, expected_seq, len(events), command_id)
            if reservation.outcome == "fenced" and cached is not None:
                self._tokens.pop(game_id, None)
                token = self._lease(fence, game_id)
                reservation = fence.reserve(game_id, token, expected_seq, len(events), command_id)
            if reservation.outcome == "fenced":
                self._tokens.pop(game_id, None)
                raise NotWriterError(f"game {game_id}: lease lost to another writer")
            if reservation.command is not None:  # the command id is already in the log
                cmd = reservation.command
                return AppendResult(game_id, cmd.first_seq, cmd.last_seq, cmd.positions, duplicate=True)
            if reservation.outcome == "stale":
                raise ConcurrencyError(game_id, expected_seq, reservation.head)
            try:
                positions = self._produce(producer, game_id, command_id, expected_seq, events)
            except Exception as exc:
                # The head is reserved but the log may hold none, some or all of these events: drop the
                # lease so the next append (here or elsewhere) rescans the log, which is the truth.
                fence.release(game_id, token)
                self._tokens.pop(game_id, None)
                raise StoreError(f"game {game_id}: produce failed, the log decides what was written") from exc
            record = CommandRecord(expected_seq + 1, expected_seq + len(events), positions)
            fence.confirm(game_id, command_id, record)
            return AppendResult(game_id, record.first_seq, record.last_seq, positions)

    def _produce(
        self,
        producer: KafkaProducer,
        game_id: str,
        command_id: str,
        expected_seq: int,
        events: Sequence[NewEvent],
    ) -> tuple[LogPosition, ...]:
        partition = self.partition_for(game_id)
        futures = [
            producer.send(
                self._topic,
                key=game_id.encode(),
                value=event.payload,
                partition=partition,
                headers=[
                    ("event-type", event.event_type.encode()),
                    ("schema-version", str(event.schema_version).encode()),
                    ("seq", str(expected_seq + 1 + i).encode()),
                    ("command-id", command_id.encode()),
                ],
            )
            for i, event in enumerate(events)
        ]
        # Wait past the delivery timeout: when this returns or raises, the producer has settled every record,
        # so releasing the lease on failure cannot let a late record land after another writer's.
        settled = (f.get(timeout=self._delivery_s + 5) for f in futures)
        return tuple(LogPosition(m.partition, m.offset) for m in settled)

    def _lease(self, fence: RedisWriterFence, game_id: str) -> int:
        """Hold the game's lease; a new holder first brings the head and command ids up to the log."""
        acquired = fence.acquire(game_id)
        if acquired is None:
            raise NotWriterError(f"game {game_id}: another writer holds the lease")
        token, fresh = acquired
        if fresh or self._tokens.get(game_id) != token:
            confirmed = fence.confirmed(game_id)
            head = confirmed.seq
            found: dict[str, list[EventRecord]] = {}
            for record in self._scan_game(game_id, confirmed.offset + 1):
                head = max(head, record.seq)
                found.setdefault(record.command_id, []).append(record)
            for command_id, records in found.items():
                positions = tuple(r.position for r in records)
                fence.confirm(game_id, command_id, CommandRecord(records[0].seq, records[-1].seq, positions))
            if not fence.sync(game_id, token, head):
                raise NotWriterError(f"game {game_id}: lease lost while catching up")
            self._tokens[game_id] = token
        return token

    def release(self, game_id: str) -> None:
        """Give up the write lease of a game (e.g. when a partition moves to another engine instance)."""
        if self._fence is not None and (token := self._tokens.pop(game_id, None)) is not None:
            self._fence.release(game_id, token)

    # -- reading -------------------------------------------------------------------------------------

    def _scan_game(self, game_id: str, from_offset: int) -> Iterator[EventRecord]:
        return (
            r for r in self.read_partition(self.partition_for(game_id), from_offset) if r.game_id == game_id
        )

    def last_seq(self, game_id: str) -> int:
        start = self._fence.confirmed(game_id) if self._fence is not None else None
        head = start.seq if start else 0
        for record in self._scan_game(game_id, start.offset + 1 if start else 0):
            head = max(head, record.seq)
        return head

    def read_stream(
        self, game_id: str, from_seq: int = 1, hint: LogPosition | None = None
    ) -> Iterator[EventRecord]:
        # Kafka has no per-key index: scan the game's partition from the hint (a snapshot's position).
        start = hint.offset if hint is not None and hint.partition == self.partition_for(game_id) else 0
        return (r for r in self._scan_game(game_id, start) if r.seq >= from_seq)

    def read_partition(self, partition: int, from_offset: int = 0) -> Iterator[EventRecord]:
        if not 0 <= partition < self.partitions:
            raise ValueError(f"partition {partition} out of range 0..{self.partitions - 1}")
        end = self.end_offset(partition)
        tp = TopicPartition(self._topic, partition)
        offset = from_offset
        stalled_since = time.monotonic()
        while offset < end:
            with self._reader_lock:
                # Re-position only when another read moved the shared reader: a seek drops prefetched data.
                if self._reader.assignment() != {tp} or self._reader.position(tp) != offset:
                    self._reader.assign([tp])
                    self._reader.seek(tp, offset)
                batch = self._reader.poll(timeout_ms=1_000, max_records=2_000).get(tp, [])
            if not batch:  # the records below `end` exist; a fetch can still come back empty
                if time.monotonic() - stalled_since > 30:
                    raise StoreError(f"{self._topic}[{partition}]: no records at {offset} below end {end}")
                continue
            stalled_since = time.monotonic()
            for message in batch:
                if message.offset >= end:
                    return
                yield _record(message)
                offset = message.offset + 1

    def end_offset(self, partition: int) -> int:
        tp = TopicPartition(self._topic, partition)
        with self._reader_lock:
            return int(self._reader.end_offsets([tp])[tp])

    def subscribe(self, group_id: str) -> Subscription:
        return _KafkaSubscription(self._bootstrap, self._topic, group_id)

    def close(self) -> None:
        for game_id in list(self._tokens):
            self.release(game_id)
        if self._producer is not None:
            self._producer.close()
        self._reader.close()


class _KafkaSubscription(Subscription):
    """A member of a Kafka consumer group (classic protocol): partitions are split between members."""

    def __init__(self, bootstrap: str, topic: str, group_id: str) -> None:
        self._consumer = KafkaConsumer(
            topic,
            bootstrap_servers=bootstrap,
            group_id=group_id,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            **CONSUMER_TIMEOUTS,
        )
        # The group is joined at the first poll: a leader whose metadata shows no partitions of the topic
        # then assigns nothing until its next metadata refresh (minutes; seen in the platform e2e).
        if not _await_partitions(self._consumer, topic):
            self._consumer.close()
            raise _no_partitions(topic, bootstrap)

    def poll(self, timeout_s: float) -> list[EventRecord]:
        deadline = time.monotonic() + timeout_s
        while True:
            remaining_ms = max(0, int((deadline - time.monotonic()) * 1000))
            batches = self._consumer.poll(timeout_ms=remaining_ms)
            records = [_record(m) for messages in batches.values() for m in messages]
            if records or remaining_ms == 0:
                return records

    def commit(self) -> None:
        self._consumer.commit()

    def close(self) -> None:
        self._consumer.close()
