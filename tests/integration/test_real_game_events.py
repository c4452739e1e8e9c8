"""Real rules-engine games through the event store: snapshot + tail rebuilds the engine's own final state.

Payloads here are the engine's JSON serialisation (rummy_rules.serialize); the protobuf codec belongs to
the engine service. The store treats both as opaque bytes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator

import pytest
import redis
from rummy_rules import bots, serialize
from rummy_rules.game import evolve
from rummy_rules.simulate import simulate
from rummy_rules.state import GameState
from rummy_rules.variants import PLAYABLE_VARIANTS
from rummy_store import EventLog, EventRecord, NewEvent, SnapshotStore
from rummy_store.catch_up import CatchUpReader
from rummy_store.embedded_log import EmbeddedEventLog
from rummy_store.embedded_snapshots import EmbeddedSnapshotStore
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.redis_snapshots import RedisSnapshotStore


class EngineProjection:
    """The engine's own fold (`evolve`) over decoded payloads; state snapshots in the engine's JSON."""

    version = "rummy-rules-json-1"

    def initial(self, game_id: str) -> GameState | None:
        return None

    def apply(self, state: GameState | None, record: EventRecord) -> GameState:
        return evolve(state, serialize.from_dict(json.loads(record.payload)))

    def dumps(self, state: GameState | None) -> bytes:
        return json.dumps(serialize.to_dict(state)).encode()

    def loads(self, data: bytes) -> GameState | None:
        decoded: GameState = serialize.from_dict(json.loads(data))
        return decoded


def play_into(log: EventLog, snapshots: SnapshotStore, every: int) -> dict[str, GameState]:
    finals = {}
    reader = CatchUpReader(log, EngineProjection(), snapshots, snapshot_every=every)
    for variant in sorted(PLAYABLE_VARIANTS):  # the variants the engine can play so far
        game_id = f"{variant}-3"
        result = simulate(
            variant, 3, hashlib.sha256(game_id.encode()).digest(), bots.greedy, max_decisions=150
        )
        for n, event in enumerate(result.events):
            payload = json.dumps(serialize.to_dict(event)).encode()
            log.append(game_id, f"cmd-{n}", n, [NewEvent(type(event).__name__, payload)])
            if n % 25 == 0:
                reader.load(game_id)  # a writer reloading now and then: snapshots get taken
        finals[game_id] = result.final
    return finals


def check(log: EventLog, snapshots: SnapshotStore) -> None:
    finals = play_into(log, snapshots, every=10)
    reader = CatchUpReader(log, EngineProjection(), snapshots, snapshot_every=10)
    for game_id, final in finals.items():
        with_snapshot = reader.load(game_id)
        assert with_snapshot.from_snapshot > 0
        assert with_snapshot.state == final
        snapshots.delete(game_id)
        assert reader.load(game_id).state == final


def test_engine_games_rebuild_from_embedded_log_and_snapshots() -> None:
    with EmbeddedEventLog(":memory:") as log:
        check(log, EmbeddedSnapshotStore(":memory:"))


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


@pytest.mark.integration
def test_engine_games_rebuild_from_kafka_and_redis(
    kafka_bootstrap: str, redis_client: redis.Redis, unique_prefix: str
) -> None:
    with KafkaEventLog(kafka_bootstrap, f"{unique_prefix}.rummy.game.events.v1", 3, writer=True) as log:
        check(log, RedisSnapshotStore(redis_client, f"{unique_prefix}:"))
