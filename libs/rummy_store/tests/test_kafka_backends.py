"""The two Kafka backends (kafka-python, confluent-kafka) are interchangeable on one cluster.

What a rolling restart from one to the other relies on: both put a key on the same partition and write
the same records, a writer on either fences a writer on the other (one transactional id per fence
group), and instances on either share one ownership group, so a group's fence groups move from an
instance on one backend to an instance on the other with nothing lost.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
import redis
from confluent_kafka import Producer
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from rummy_store import NewEvent, NotWriterError
from rummy_store.kafka_clients import BACKENDS, KAFKA_PYTHON, RDKAFKA
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.kafka_topic import ensure_topic
from rummy_store.ownership import OwnerDirectory, PartitionOwnership
from rummy_store.partitioning import partition_for

pytestmark = pytest.mark.integration
KEYS = [f"game-{n}" for n in range(40)]


@pytest.fixture
def topic(unique_prefix: str) -> str:
    return f"{unique_prefix}.rummy.game.events.v1"


def raw(kafka_bootstrap: str, topic: str, count: int) -> list[object]:
    """The first `count` records of the topic, as kafka-python reads them (any isolation)."""
    consumer = KafkaConsumer(bootstrap_servers=kafka_bootstrap, enable_auto_commit=False)
    tps = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or ()]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    found: list[object] = []
    deadline = time.monotonic() + 20
    while len(found) < count and time.monotonic() < deadline:
        found.extend(m for ms in consumer.poll(timeout_ms=500).values() for m in ms)
    consumer.close()
    return found


def test_both_partitioners_put_a_key_where_partition_for_does(kafka_bootstrap: str, topic: str) -> None:
    """Records sent without a partition: kafka-python's default and librdkafka's murmur2_random agree
    with `partition_for` (Java's murmur2), so any writer of ours agrees with any other client."""
    ensure_topic(kafka_bootstrap, topic, 7)
    python = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    for key in KEYS:
        python.send(topic, key=key.encode(), value=b"kafka-python")
    python.close()
    rd = Producer({"bootstrap.servers": kafka_bootstrap, "partitioner": "murmur2_random"})
    for key in KEYS:
        rd.produce(topic, key=key.encode(), value=b"rdkafka")
    assert rd.flush(20) == 0
    records = raw(kafka_bootstrap, topic, 2 * len(KEYS))
    placed = {(m.value, m.key.decode(), m.partition) for m in records}  # type: ignore[attr-defined]
    expected = {(v, k, partition_for(k, 7)) for k in KEYS for v in (b"kafka-python", b"rdkafka")}
    assert placed == expected


def test_both_backends_write_the_same_records(kafka_bootstrap: str, topic: str) -> None:
    for n, client in enumerate(BACKENDS):
        with KafkaEventLog(kafka_bootstrap, topic, 3, writer=True, client=client) as log:
            log.append("g1", f"c{n}", n, [NewEvent("CardDrawn", b"envelope", schema_version=3)])
    first, second = raw(kafka_bootstrap, topic, 2)
    for m, seq, command in ((first, b"1", b"c0"), (second, b"2", b"c1")):
        assert (m.key, m.value, m.partition) == (b"g1", b"envelope", partition_for("g1", 3))  # type: ignore[attr-defined]
        assert m.headers == [  # type: ignore[attr-defined]
            ("event-type", b"CardDrawn"),
            ("schema-version", b"3"),
            ("seq", seq),
            ("command-id", command),
        ]


@pytest.mark.parametrize(("old_client", "new_client"), [(KAFKA_PYTHON, RDKAFKA), (RDKAFKA, KAFKA_PYTHON)])
def test_a_writer_on_either_backend_fences_one_on_the_other(
    kafka_bootstrap: str, topic: str, old_client: str, new_client: str
) -> None:
    def grouped(client: str) -> KafkaEventLog:
        return KafkaEventLog(
            kafka_bootstrap, topic, 4, writer=True, claim_on_demand=False, fence_groups=2, client=client
        )

    with grouped(old_client) as old, grouped(new_client) as new:
        a, b = (next(g for n in range(1000) if old.partition_for(g := f"g{n}") == p) for p in (0, 2))
        old.claim([0])
        old.append(a, "c1", 0, [NewEvent("E1", b"1")])
        new.claim([0])  # one id for the group: the broker fences the old producer, whichever library
        for game, seq in ((a, 1), (b, 0)):
            with pytest.raises(NotWriterError):
                old.append(game, "c2", seq, [NewEvent("E2", b"2")])
        new.append(a, "c2", 1, [NewEvent("E2", b"2")])
        assert old.owned == set() and new.owned == {0}
        assert [(r.seq, r.command_id) for r in new.read_stream(a)] == [(1, "c1"), (2, "c2")]


def _wait(condition: object, what: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"not within {timeout_s:g} s: {what}"
        time.sleep(0.1)


class Instance:
    """One service instance: a writer log and its ownership, on one backend."""

    def __init__(
        self, bootstrap: str, topic: str, group: str, client: str, directory: OwnerDirectory
    ) -> None:
        self.log = KafkaEventLog(
            bootstrap, topic, 4, writer=True, claim_on_demand=False, fence_groups=2, client=client
        )
        self.partitions: set[int] = set()
        self._lock = threading.Lock()
        self.ownership = PartitionOwnership(
            bootstrap,
            self.log,
            group,
            directory,
            assigned=self._assigned,
            revoked=self._revoked,
        )
        self.ownership.start(client)

    def _assigned(self, partitions: set[int]) -> None:
        with self._lock:
            self.partitions |= partitions

    def _revoked(self, partitions: set[int]) -> None:
        with self._lock:
            self.partitions -= partitions

    def stop(self) -> None:
        self.ownership.stop()
        self.log.close()


@pytest.fixture
def directory(redis_url: str, unique_prefix: str) -> Iterator[OwnerDirectory]:
    client = redis.Redis.from_url(redis_url)
    yield OwnerDirectory(client, f"{unique_prefix}:", "events")
    client.close()


def test_a_rolling_restart_hands_fence_groups_from_one_backend_to_the_other(
    kafka_bootstrap: str, topic: str, unique_prefix: str, directory: OwnerDirectory
) -> None:
    group = f"{unique_prefix}.engines"
    old = Instance(kafka_bootstrap, topic, group, KAFKA_PYTHON, directory)
    try:
        assert old.ownership.settled.wait(30) and old.partitions == {0, 1, 2, 3}
        game = next(g for n in range(1000) if old.log.partition_for(g := f"g{n}") == 1)
        old.log.append(game, "c1", 0, [NewEvent("E1", b"1")])
        new = Instance(kafka_bootstrap, topic, group, RDKAFKA, directory)
    except BaseException:
        old.stop()
        raise
    try:
        _wait(lambda: new.partitions and old.partitions and new.ownership.generation() is not None, "split")
        assert new.partitions | old.partitions == {0, 1, 2, 3} and not new.partitions & old.partitions
        old.stop()  # the old instance's turn to restart: it leaves the group, its groups move
        _wait(lambda: new.partitions == {0, 1, 2, 3}, "the rdkafka instance owns every partition")
        assert new.ownership.generation() is not None
        new.log.append(game, "c2", 1, [NewEvent("E2", b"2")])  # the game goes on, nothing lost
        assert [(r.seq, r.command_id) for r in new.log.read_stream(game)] == [(1, "c1"), (2, "c2")]
        assert directory.read() == dict.fromkeys(range(4), RDKAFKA)
    finally:
        new.stop()
