"""``python -m meldstream_benches.eventlog`` (``make bench-eventlog``): the event store's costs next to
bare baselines.

Measured in one run against the same servers (found or started by rummy_infra):
- append latency p50/p99 through ``KafkaEventLog`` (Redis fence + acks=all produce), beside a bare
  acks=all ``KafkaProducer.send().get()``;
- snapshot load time from Redis (``RedisSnapshotStore.load``), beside a bare ``GET`` of the same bytes;
- full rebuild throughput (every game of every partition folded by ``CatchUpReader``), beside a bare
  consumer reading the same records.
Figures go to stdout; progress to stderr.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
import uuid
from collections.abc import Callable

import redis
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from rummy_infra import provide_kafka, provide_redis
from rummy_infra.figures import latency
from rummy_store.catch_up import CatchUpReader
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.records import EventRecord, LogPosition, NewEvent
from rummy_store.redis_snapshots import RedisSnapshotStore
from rummy_store.snapshots import Snapshot

PARTITIONS = 3


class DigestFold:
    """A cheap stand-in for the rules engine's fold: a SHA-256 chain over the payloads."""

    version = "bench-1"

    def initial(self, game_id: str) -> bytes:
        return game_id.encode()

    def apply(self, state: bytes, record: EventRecord) -> bytes:
        return hashlib.sha256(state + record.payload).digest()

    def dumps(self, state: bytes) -> bytes:
        return state

    def loads(self, data: bytes) -> bytes:
        return data


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def timed(count: int, action: Callable[[int], object], label: str) -> list[float]:
    """Run ``action(i)`` ``count`` times; per-call seconds."""
    samples = []
    for i in range(count):
        start = time.perf_counter()
        action(i)
        samples.append(time.perf_counter() - start)
        if (i + 1) % max(1, count // 4) == 0:
            progress(f"  {label}: {i + 1}/{count}")
    return samples


def bench_append(bootstrap: str, prefix: str, count: int) -> None:
    payload = bytes(200)  # about one serialized GameEvent envelope
    topic = f"{prefix}.append.rummy.game.events.v1"
    progress(f"append: {count} single-event appends, 20 games")
    with KafkaEventLog(bootstrap, topic, PARTITIONS, writer=True) as log:
        heads = dict.fromkeys(range(20), 0)
        log.append("warm-up", "warm-up", 0, [NewEvent("E", payload)])

        def append(i: int) -> None:
            game = i % 20
            log.append(f"g{game}", f"c{i}", heads[game], [NewEvent("E", payload)])
            heads[game] += 1

        store = timed(count, append, "KafkaEventLog.append")
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True, linger_ms=0)
    producer.send(topic, key=b"warm-up", value=payload).get(timeout=30)
    bare = timed(
        count, lambda i: producer.send(topic, key=f"g{i % 20}".encode(), value=payload).get(30), "bare"
    )
    producer.close()
    print(f"append, acks=all    KafkaEventLog.append      {latency(store)}")
    print(f"                    bare producer send().get  {latency(bare)}")


def bench_snapshot(client: redis.Redis, prefix: str, count: int, size: int) -> None:
    progress(f"snapshot load: {count} loads of a {size}-byte state")
    store = RedisSnapshotStore(client, f"{prefix}:")
    state = bytes(range(256)) * (size // 256)
    store.save(Snapshot("g1", 100, LogPosition(0, 99), "v1", state))
    client.set(f"{prefix}:bare", state)
    loaded = timed(count, lambda _: store.load("g1"), "RedisSnapshotStore.load")
    bare = timed(count, lambda _: client.get(f"{prefix}:bare"), "bare GET")
    print(f"snapshot load       RedisSnapshotStore.load   {latency(loaded)}")
    print(f"                    bare Redis GET            {latency(bare)}")


def bench_rebuild(bootstrap: str, prefix: str, games: int, per_game: int) -> None:
    topic = f"{prefix}.rebuild.rummy.game.events.v1"
    total = games * per_game
    progress(f"rebuild: writing {total} events ({games} games x {per_game}, 50 events per append)")
    with KafkaEventLog(bootstrap, topic, PARTITIONS, writer=True) as log:
        for game in range(games):
            for first in range(0, per_game, 50):
                batch = [
                    NewEvent("E", f"g{game}/{first + i}".encode() * 10)
                    for i in range(min(50, per_game - first))
                ]
                log.append(f"g{game}", f"c{first}", first, batch)
            if (game + 1) % max(1, games // 4) == 0:
                progress(f"  written {game + 1}/{games} games")
        progress("rebuild: folding every partition")
        reader = CatchUpReader(log, DigestFold())
        start = time.perf_counter()
        rebuilt = sum(1 for p in range(PARTITIONS) for _ in reader.rebuild_partition(p))
        elapsed = time.perf_counter() - start
        assert rebuilt == games
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    start = time.perf_counter()
    seen = 0
    while seen < total:
        seen += sum(len(batch) for batch in consumer.poll(timeout_ms=1_000, max_records=2_000).values())
    bare = time.perf_counter() - start
    consumer.close()
    print(f"full rebuild        CatchUpReader             {total / elapsed:10.0f} events/s  ({total} events)")
    print(f"                    bare consumer poll        {total / bare:10.0f} events/s")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--appends", type=int, default=1000, help="appends to time (default 1000)")
    parser.add_argument("--loads", type=int, default=2000, help="snapshot loads to time (default 2000)")
    parser.add_argument("--state-bytes", type=int, default=4096, help="snapshot size (default 4096)")
    parser.add_argument("--games", type=int, default=200, help="games for the rebuild (default 200)")
    parser.add_argument("--events-per-game", type=int, default=100, help="events per game (default 100)")
    args = parser.parse_args()
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    progress("finding or starting Kafka and Redis ...")
    with provide_kafka() as kafka, provide_redis() as redis_server:
        print(f"kafka: {kafka.address} from {kafka.origin}")
        print(f"redis: {redis_server.address} from {redis_server.origin}")
        client = redis.Redis.from_url(redis_server.address)
        bench_append(kafka.address, prefix, args.appends)
        bench_snapshot(client, prefix, args.loads, args.state_bytes)
        bench_rebuild(kafka.address, prefix, args.games, args.events_per_game)
        client.close()


if __name__ == "__main__":
    main()
