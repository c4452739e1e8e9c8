"""CatchUpReader when the log holds records that do not fit or the snapshot store is gone.

A stray record (one the projection cannot apply, a seq that repeats or jumps) is skipped, logged with
where it sits and counted; the game's own records around it still fold, and the seq a load answers is
the one the game's writer expects next, whether or not the writer counted the stray record. Redis
going away (and coming back empty) only costs folding from the log.
"""

from __future__ import annotations

import uuid

import pytest
import redis
from kafka import KafkaProducer
from rummy_infra.local import restartable_redis
from rummy_store import EventLog, EventRecord, NewEvent, StoreError
from rummy_store.catch_up import CatchUpReader
from rummy_store.embedded_log import EmbeddedEventLog
from rummy_store.embedded_snapshots import EmbeddedSnapshotStore
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.kafka_records import headers
from rummy_store.redis_snapshots import RedisSnapshotStore

Payloads = tuple[bytes, ...]


class Kept:
    """Keeps the payloads it applied; refuses b"bad", as the engine refuses a payload that does not parse."""

    version = "payloads-1"

    def initial(self, game_id: str) -> Payloads:
        return ()

    def apply(self, state: Payloads, record: EventRecord) -> Payloads:
        if record.payload == b"bad":
            raise ValueError("not a payload this fold knows")
        return (*state, record.payload)

    def dumps(self, state: Payloads) -> bytes:
        return b"\n".join(state)

    def loads(self, data: bytes) -> Payloads:
        return tuple(data.split(b"\n")) if data else ()


def _append(log: EventLog, game_id: str, expected: int, *payloads: bytes) -> None:
    log.append(game_id, f"c{expected}", expected, [NewEvent("e", p) for p in payloads])


def test_a_record_the_projection_cannot_apply_is_skipped_reported_and_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with EmbeddedEventLog(":memory:") as log:
        _append(log, "g", 0, b"a", b"b")
        _append(log, "g", 2, b"bad")  # the log counts it: the writer goes on at seq 4
        _append(log, "g", 3, b"c")
        reader = CatchUpReader(log, Kept())
        loaded = reader.load("g")
        assert (loaded.state, loaded.seq, loaded.replayed) == ((b"a", b"b", b"c"), 4, 3)
        assert reader.skipped == 1
        (line,) = [r.getMessage() for r in caplog.records if "skipped record" in r.getMessage()]
        assert f"embedded log[{log.partition_for('g')}]@2: game g seq 3 (command c2): cannot apply" in line

        steps = list(reader.steps("g"))
        assert [(s.record.seq, bool(s.skipped)) for s in steps] == [(1, 0), (2, 0), (3, 1), (4, 0)]
        assert steps[-1].state == (b"a", b"b", b"c")
        assert dict((g, (s, q)) for g, s, q in reader.rebuild_partition(log.partition_for("g"))) == {
            "g": ((b"a", b"b", b"c"), 4)
        }


def test_a_game_whose_last_record_cannot_be_applied_goes_on_after_it() -> None:
    with EmbeddedEventLog(":memory:") as log:
        _append(log, "g", 0, b"a")
        _append(log, "g", 1, b"bad")
        reader = CatchUpReader(log, Kept())
        loaded = reader.load("g")
        assert (loaded.state, loaded.seq) == ((b"a",), 2)  # the seq the log expects next is 3
        _append(log, "g", loaded.seq, b"b")
        assert reader.load("g").state == (b"a", b"b")


@pytest.mark.integration
def test_stray_records_on_kafka_are_skipped_and_the_writers_go_on(
    kafka_bootstrap: str, unique_prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    topic = f"{unique_prefix}.rummy.game.events.v1"
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap, acks="all")

    def stray(log: KafkaEventLog, seq: int, payload: bytes) -> None:
        """A record with valid headers that no writer of the log wrote (another tool, a bad bridge)."""
        event = NewEvent("e", payload)
        producer.send(
            topic,
            key=b"g",
            value=payload,
            partition=log.partition_for("g"),
            headers=headers(event, seq, f"stray-{seq}"),
        ).get(timeout=30)

    try:
        with KafkaEventLog(kafka_bootstrap, topic, 3, writer=True) as first:
            _append(first, "g", 0, b"a", b"b")
            stray(first, 3, b"bad")  # at the next seq: pending
            stray(first, 1, b"again")  # repeats seq 1
            stray(first, 9, b"far")  # skips ahead
            reader = CatchUpReader(first, Kept())
            loaded = reader.load("g")
            # This writer never saw the stray records: it expects seq 3 next, and the load says so.
            assert (loaded.state, loaded.seq, reader.skipped) == ((b"a", b"b"), 2, 3)
            _append(first, "g", loaded.seq, b"c")  # its own seq 3, after the stray one
            loaded = reader.load("g")
            assert (loaded.state, loaded.seq) == ((b"a", b"b", b"c"), 3)
            stray(first, 4, b"bad")
        reasons = " | ".join(r.getMessage() for r in caplog.records if "skipped record" in r.getMessage())
        assert "seq 1 repeats" in reasons and "seq 9 skips ahead" in reasons and "cannot apply" in reasons
        assert f"{topic}[{first.partition_for('g')}]@" in reasons

        # A new writer folds the log by headers and counts the stray seq 4: the load agrees with it.
        with KafkaEventLog(kafka_bootstrap, topic, 3, writer=True) as second:
            reader = CatchUpReader(second, Kept())
            second.claim([second.partition_for("g")])
            loaded = reader.load("g")
            assert (loaded.state, loaded.seq) == ((b"a", b"b", b"c"), 4)
            _append(second, "g", loaded.seq, b"d")
            loaded = reader.load("g")
            assert (loaded.state, loaded.seq) == ((b"a", b"b", b"c", b"d"), 5)
            rebuilt = {g: (s, q) for g, s, q in reader.rebuild_partition(second.partition_for("g"))}
            assert rebuilt == {"g": ((b"a", b"b", b"c", b"d"), 5)}
    finally:
        producer.close()


@pytest.mark.integration
def test_a_lost_snapshot_store_costs_a_fold_from_the_log(caplog: pytest.LogCaptureFixture) -> None:
    with restartable_redis() as server, EmbeddedEventLog(":memory:") as log:
        client = redis.Redis.from_url(server.url, socket_timeout=2, socket_connect_timeout=2)
        snapshots = RedisSnapshotStore(client, f"{uuid.uuid4().hex}:")
        reader = CatchUpReader(log, Kept(), snapshots, snapshot_every=2)
        for n in range(4):
            _append(log, "g", n, f"e{n}".encode())
            reader.load("g")
        assert reader.load("g").from_snapshot == 4

        server.kill()
        with pytest.raises(StoreError):  # a reader that cannot do without it hears why
            snapshots.load("g")
        _append(log, "g", 4, b"e4", b"e5")
        loaded = reader.load("g")  # no snapshot, and the save it tries is refused: both logged
        assert (loaded.seq, loaded.from_snapshot, len(loaded.state)) == (6, 0, 6)
        messages = [r.getMessage() for r in caplog.records]
        assert any(m.startswith("game g: snapshot unusable") for m in messages)
        assert any(m.startswith("snapshot of game g at seq 6 not saved") for m in messages)

        server.start()  # empty
        loaded = reader.load("g")
        assert (loaded.seq, loaded.from_snapshot) == (6, 0)
        assert reader.load("g").from_snapshot == 6  # saved again by the load before
        client.close()


def test_an_embedded_snapshot_that_does_not_decode_is_ignored(caplog: pytest.LogCaptureFixture) -> None:
    class Picky(Kept):
        def loads(self, data: bytes) -> Payloads:
            raise ValueError("written by another build")

    snapshots = EmbeddedSnapshotStore(":memory:")
    with EmbeddedEventLog(":memory:") as log:
        _append(log, "g", 0, b"a", b"b")
        CatchUpReader(log, Kept(), snapshots, snapshot_every=1).load("g")
        loaded = CatchUpReader(log, Picky(), snapshots, snapshot_every=1).load("g")
        assert (loaded.state, loaded.from_snapshot) == ((b"a", b"b"), 0)
        assert any("snapshot unusable (written by another build)" in r.getMessage() for r in caplog.records)
    snapshots.close()
