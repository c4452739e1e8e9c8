"""The single-writer rule on Kafka: lease handover, fenced old writers, and recovery after a writer dies."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import redis
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from rummy_store import NewEvent, NotWriterError
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.redis_fence import RedisWriterFence

pytestmark = pytest.mark.integration
LEASE_MS = 1_500


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


@pytest.fixture
def topic(unique_prefix: str) -> str:
    return f"{unique_prefix}.rummy.game.events.v1"


def writer(kafka_bootstrap: str, topic: str, client: redis.Redis, prefix: str) -> KafkaEventLog:
    return KafkaEventLog(kafka_bootstrap, topic, 3, RedisWriterFence(client, f"{prefix}:", lease_ms=LEASE_MS))


def one(name: str) -> list[NewEvent]:
    return [NewEvent(name, name.encode())]


def reserve_after_first_event(
    fence: RedisWriterFence, survivor: KafkaEventLog, count: int, command_id: str
) -> None:
    """`survivor` appends g1's first event and lets go; another writer takes the lease and reserves."""
    survivor.append("g1", "c1", 0, one("E1"))
    survivor.release("g1")
    acquired = fence.acquire("g1")
    assert acquired is not None
    assert fence.reserve("g1", acquired[0], 1, count, command_id).outcome == "ok"


def test_records_are_keyed_by_game_with_type_and_version_headers(
    kafka_bootstrap: str, topic: str, client: redis.Redis, unique_prefix: str
) -> None:
    with writer(kafka_bootstrap, topic, client, unique_prefix) as log:
        result = log.append("g1", "c1", 0, [NewEvent("GameCreated", b"envelope", schema_version=3)])
    (position,) = result.positions
    consumer = KafkaConsumer(bootstrap_servers=kafka_bootstrap, enable_auto_commit=False)
    tp = TopicPartition(topic, position.partition)
    consumer.assign([tp])
    consumer.seek(tp, position.offset)
    messages: list[object] = []
    while not messages:
        messages = consumer.poll(timeout_ms=1_000).get(tp, [])
    consumer.close()
    message = messages[0]
    assert message.key == b"g1" and message.value == b"envelope"  # type: ignore[attr-defined]
    assert dict(message.headers) == {  # type: ignore[attr-defined]
        "event-type": b"GameCreated",
        "schema-version": b"3",
        "seq": b"1",
        "command-id": b"c1",
    }


def test_lease_passes_on_only_when_released_or_expired_and_fences_the_old_writer(
    kafka_bootstrap: str, topic: str, client: redis.Redis, unique_prefix: str
) -> None:
    with (
        writer(kafka_bootstrap, topic, client, unique_prefix) as a,
        writer(kafka_bootstrap, topic, client, unique_prefix) as b,
    ):
        a.append("g1", "a1", 0, one("A1"))
        with pytest.raises(NotWriterError):
            b.append("g1", "b1", 1, one("B1"))
        time.sleep(LEASE_MS / 1000 + 0.3)  # a stops renewing (paused or dead): its lease runs out
        b.append("g1", "b1", 1, one("B1"))
        with pytest.raises(NotWriterError):
            a.append("g1", "a2", 2, one("A2"))  # a's token is stale: fenced, nothing written
        b.release("g1")
        a.append("g1", "a2", 2, one("A2"))  # a takes over again, after catching up from the log
        assert [(r.seq, r.command_id) for r in a.read_stream("g1")] == [(1, "a1"), (2, "b1"), (3, "a2")]


def test_writer_dying_after_reserving_leaves_no_gap(
    kafka_bootstrap: str, topic: str, client: redis.Redis, unique_prefix: str
) -> None:
    fence = RedisWriterFence(client, f"{unique_prefix}:", lease_ms=LEASE_MS)
    with writer(kafka_bootstrap, topic, client, unique_prefix) as survivor:
        reserve_after_first_event(fence, survivor, 2, "c2")  # then it dies before producing
        time.sleep(LEASE_MS / 1000 + 0.3)
        survivor.append("g1", "c3", 1, one("E2"))  # the head comes from the log (1), not from Redis (3)
        assert [r.seq for r in survivor.read_stream("g1")] == [1, 2]


def test_writer_dying_after_producing_but_before_confirming_is_recovered_from_the_log(
    kafka_bootstrap: str, topic: str, client: redis.Redis, unique_prefix: str
) -> None:
    fence = RedisWriterFence(client, f"{unique_prefix}:", lease_ms=LEASE_MS)
    with writer(kafka_bootstrap, topic, client, unique_prefix) as survivor:
        reserve_after_first_event(fence, survivor, 1, "lost")
        producer = KafkaProducer(bootstrap_servers=kafka_bootstrap, acks="all")
        headers = [("event-type", b"E2"), ("schema-version", b"1"), ("seq", b"2"), ("command-id", b"lost")]
        partition = survivor.partition_for("g1")
        producer.send(topic, key=b"g1", value=b"E2", partition=partition, headers=headers).get(timeout=30)
        producer.close()  # ... and it dies before recording the command id
        time.sleep(LEASE_MS / 1000 + 0.3)
        retry = survivor.append("g1", "lost", 1, one("E2"))  # the client retries the lost command
        assert retry.duplicate and (retry.first_seq, retry.last_seq) == (2, 2)
        survivor.append("g1", "c3", 2, one("E3"))
        assert [(r.seq, r.command_id) for r in survivor.read_stream("g1")] == [
            (1, "c1"),
            (2, "lost"),
            (3, "c3"),
        ]
