"""Snapshots are a cache: replay from a snapshot equals replay from event 1; losing them changes nothing."""

from __future__ import annotations

import abc
import hashlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rummy_store import EventLog, EventRecord, LogPosition, NewEvent, Snapshot, SnapshotStore
from rummy_store.catch_up import CatchUpReader
from rummy_store.embedded_log import EmbeddedEventLog
from rummy_store.embedded_snapshots import EmbeddedSnapshotStore
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.redis_snapshots import RedisSnapshotStore


@dataclass(frozen=True)
class Chain:
    """A fold that notices any missing, repeated or reordered event: a hash chain plus a count."""

    digest: bytes
    count: int


class ChainProjection:
    version = "chain-1"

    def initial(self, game_id: str) -> Chain:
        return Chain(hashlib.sha256(game_id.encode()).digest(), 0)

    def apply(self, state: Chain, record: EventRecord) -> Chain:
        link = state.digest + record.event_type.encode() + record.seq.to_bytes(8) + record.payload
        return Chain(hashlib.sha256(link).digest(), state.count + 1)

    def dumps(self, state: Chain) -> bytes:
        return state.digest + state.count.to_bytes(8)

    def loads(self, data: bytes) -> Chain:
        return Chain(data[:32], int.from_bytes(data[32:]))


class SnapshotStoreContract(abc.ABC):
    @abc.abstractmethod
    def store(self, *args: object) -> SnapshotStore: ...

    def test_save_then_load_round_trips(self, store: SnapshotStore) -> None:
        snapshot = Snapshot("g1", 7, LogPosition(2, 41), "v1", b"\x00state\xff")
        assert store.save(snapshot)
        assert store.load("g1") == snapshot
        assert store.load("g2") is None

    def test_older_snapshot_never_replaces_newer(self, store: SnapshotStore) -> None:
        store.save(Snapshot("g1", 9, LogPosition(0, 9), "v1", b"new"))
        assert not store.save(Snapshot("g1", 4, LogPosition(0, 4), "v1", b"old"))
        loaded = store.load("g1")
        assert loaded is not None and loaded.state == b"new"

    def test_delete_forgets_the_game(self, store: SnapshotStore) -> None:
        store.save(Snapshot("g1", 1, LogPosition(0, 0), "v1", b"s"))
        store.delete("g1")
        assert store.load("g1") is None


class TestEmbeddedSnapshotStore(SnapshotStoreContract):
    @pytest.fixture
    def store(self) -> Iterator[SnapshotStore]:
        store = EmbeddedSnapshotStore(":memory:")
        yield store
        store.close()


@pytest.mark.integration
class TestRedisSnapshotStore(SnapshotStoreContract):
    @pytest.fixture
    def store(self, redis_url: str, unique_prefix: str) -> Iterator[SnapshotStore]:
        store = RedisSnapshotStore(redis.Redis.from_url(redis_url), prefix=f"{unique_prefix}:")
        yield store
        store.close()


# A game script: per command, how many events it appends; games interleave in the log.
scripts = st.lists(
    st.tuples(st.sampled_from(["ga", "gb", "gc"]), st.integers(min_value=1, max_value=4)),
    min_size=1,
    max_size=40,
)


def play(log: EventLog, reader: CatchUpReader[Chain], script: list[tuple[str, int]]) -> None:
    """Append the script as a writer would: load, append, fold the new events, snapshot when due."""
    projection = ChainProjection()
    for n, (game_id, count) in enumerate(script):
        loaded = reader.load(game_id)
        batch = [NewEvent(f"E{n}", f"{game_id}/{n}/{i}".encode()) for i in range(count)]
        log.append(game_id, f"cmd-{n}", loaded.seq, batch)
        state = loaded.state
        new = list(log.read_stream(game_id, loaded.seq + 1))
        for record in new:
            state = projection.apply(state, record)
        reader.after_append(game_id, state, new[-1], loaded.seq)


def assert_snapshots_change_nothing(
    log: EventLog, snapshots: SnapshotStore, script: list[tuple[str, int]], every: int
) -> None:
    projection = ChainProjection()
    with_snapshots = CatchUpReader(log, projection, snapshots, snapshot_every=every)
    play(log, with_snapshots, script)
    from_event_one = CatchUpReader(log, projection)
    for game_id in {g for g, _ in script}:
        expected = from_event_one.load(game_id)
        assert expected.from_snapshot == 0
        loaded = with_snapshots.load(game_id)
        assert (loaded.state, loaded.seq) == (expected.state, expected.seq)
        assert loaded.state.count == expected.seq == sum(c for g, c in script if g == game_id)
        if expected.seq >= every:
            assert loaded.from_snapshot > 0, "a snapshot was due and should have been used"
        snapshots.delete(game_id)
        rebuilt = with_snapshots.load(game_id)
        assert (rebuilt.state, rebuilt.seq, rebuilt.from_snapshot) == (expected.state, expected.seq, 0)
    by_partition = {
        game_id: (state, seq)
        for partition in range(log.partitions)
        for game_id, state, seq in from_event_one.rebuild_partition(partition)
    }
    folded = {game_id: from_event_one.load(game_id) for game_id in {g for g, _ in script}}
    assert by_partition == {game_id: (game.state, game.seq) for game_id, game in folded.items()}
    together = with_snapshots.load_many(list(folded))  # one read for all, each from its own snapshot
    assert {g: (game.state, game.seq) for g, game in together.items()} == by_partition


@settings(max_examples=60, deadline=None)
@given(script=scripts, every=st.integers(min_value=1, max_value=7))
def test_replay_from_snapshot_equals_replay_from_first_event(
    script: list[tuple[str, int]], every: int
) -> None:
    with EmbeddedEventLog(":memory:") as log:
        snapshots = EmbeddedSnapshotStore(":memory:")
        assert_snapshots_change_nothing(log, snapshots, script, every)
        snapshots.close()


@pytest.mark.integration
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(script=scripts, every=st.integers(min_value=1, max_value=7))
def test_replay_from_redis_snapshot_equals_replay_from_first_event(
    redis_url: str, script: list[tuple[str, int]], every: int
) -> None:
    # redis_url is only an address; each example takes its own key prefix
    client = redis.Redis.from_url(redis_url)
    with EmbeddedEventLog(":memory:") as log:
        assert_snapshots_change_nothing(
            log, RedisSnapshotStore(client, f"{uuid.uuid4().hex}:"), script, every
        )
    client.close()


@pytest.mark.integration
def test_kafka_log_with_redis_snapshots_rebuilds_the_same_games(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str
) -> None:
    client = redis.Redis.from_url(redis_url)
    script = [(g, 1 + n % 3) for n, g in enumerate(["ga", "gb", "gc", "ga", "ga", "gb", "gd"] * 4)]
    with KafkaEventLog(kafka_bootstrap, f"{unique_prefix}.rummy.game.events.v1", 3, writer=True) as log:
        assert_snapshots_change_nothing(log, RedisSnapshotStore(client, f"{unique_prefix}:"), script, every=4)
    client.close()


def test_snapshot_of_another_rules_version_is_ignored() -> None:
    with EmbeddedEventLog(":memory:") as log:
        snapshots = EmbeddedSnapshotStore(":memory:")
        log.append("g1", "c1", 0, [NewEvent("E", b"x"), NewEvent("E", b"y")])
        snapshots.save(Snapshot("g1", 2, LogPosition(log.partition_for("g1"), 1), "chain-0", b"garbage"))
        loaded = CatchUpReader(log, ChainProjection(), snapshots, snapshot_every=100).load("g1")
        assert (loaded.seq, loaded.from_snapshot, loaded.replayed) == (2, 0, 2)
        snapshots.close()
