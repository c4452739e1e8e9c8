"""``python -m meldstream_benches.scoring`` (part of ``make bench-platform``): scoring lag under load.

Starts a scoring instance on real Kafka and Redis (found or started by rummy_infra) and appends G
synthetic kalooki games (started and seated, a draw, the deal's end, the game's end; as the engine
logs them) from several threads as fast as the log takes them, after one warm-up game (so the
consumer group has joined). Lag = time from a game's GameEnded append being acknowledged to its
MatchScored result being readable in Redis. Baseline, same run and topic: a bare consumer group that
only notes when each GameEnded reaches it (what any Kafka reader waits, before scoring does any work).
Reports p50/p99/max lag of both, their ratio, and the records per second scoring applied (bounded by
what the writers offer). Then the capacity a replay needs: the whole topic, read once into memory
(timed: the baseline), scored again under a fresh key prefix in polls of 500 records (Kafka's default
`max_poll_records`), records per second of each.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import redis
from rummy.game.v1 import events_pb2 as ev
from rummy_contracts.event_format import SCHEMA_VERSION
from rummy_infra import provide_kafka, provide_redis
from rummy_scoring.config import ScoringConfig
from rummy_scoring.handlers import Handlers
from rummy_scoring.service import start_scoring
from rummy_scoring.store import Keys
from rummy_service.consumer import ConsumerLoop
from rummy_store import EventRecord, NewEvent
from rummy_store.kafka_log import KafkaEventLog

PLAYERS = 4
POLL = 500  # records a replay applies at a time: Kafka's default max_poll_records


def game_events(game_id: str, index: int) -> list[tuple[str, list[NewEvent]]]:
    """(command id, events) per append, as the engine writes them."""
    players = [f"player-{(index * PLAYERS + seat) % 200}" for seat in range(PLAYERS)]
    winner = index % PLAYERS
    penalties = [0 if seat == winner else 10 + 7 * seat for seat in range(PLAYERS)]
    envelopes = [
        ev.GameEvent(game_started=ev.GameStarted(variant="kalooki", players=PLAYERS)),
        ev.GameEvent(table_seated=ev.TableSeated(player_ids=players, requested_by="matchmaking", rated=True)),
        ev.GameEvent(card_drawn=ev.CardDrawn(seat=0)),
        ev.GameEvent(deal_ended=ev.DealEnded(winner=winner, penalties=penalties)),
        ev.GameEvent(game_ended=ev.GameEnded(winners=[winner], totals=penalties)),
    ]
    return appends(
        game_id, [("engine/create", envelopes[:2]), ("draw", envelopes[2:3]), ("out", envelopes[3:])]
    )


def appends(game_id: str, commands: list[tuple[str, list[ev.GameEvent]]]) -> list[tuple[str, list[NewEvent]]]:
    """Each command's envelopes stamped as the engine stamps them (game, seq from 1, command id,
    time, event format) and encoded, ready for `EventLog.append`."""
    out = []
    seq = 0
    for command, group in commands:
        batch = []
        for envelope in group:
            seq += 1
            envelope.game_id, envelope.seq, envelope.command_id = game_id, seq, command
            envelope.schema_version = SCHEMA_VERSION
            envelope.occurred_at.GetCurrentTime()
            case = envelope.WhichOneof("event") or ""
            batch.append(NewEvent(case, envelope.SerializeToString(), SCHEMA_VERSION))
        out.append((command, batch))
    return out


async def run(kafka: str, redis_url: str, games: int, writers: int) -> dict[str, float]:
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    config = ScoringConfig(
        address="127.0.0.1:0",
        kafka=kafka,
        redis=redis_url,
        game_topic=f"{prefix}.rummy.game.events.v1",
        matchmaking_topic=f"{prefix}.rummy.matchmaking.events.v1",
        topic=f"{prefix}.rummy.scoring.events.v1",
        key_prefix=f"{prefix}:",
        group=f"{prefix}.scoring",
    )
    scoring = await start_scoring(config)
    client = redis.Redis.from_url(redis_url)
    log = KafkaEventLog(kafka, config.game_topic, 3, writer=True)
    keys = Keys(config.key_prefix)
    ended: dict[str, float] = {}
    delivered: dict[str, float] = {}

    def note(record: EventRecord) -> None:
        if record.event_type == "game_ended":
            delivered.setdefault(record.game_id, time.perf_counter())

    reader = KafkaEventLog(kafka, config.game_topic, 3)
    bare = ConsumerLoop(reader, f"{prefix}.bare", note)
    bare.start()

    def play(index: int) -> None:
        game_id = f"g{index}"
        expected = 0
        for command, events in game_events(game_id, index):
            log.append(game_id, command, expected, events)
            expected += len(events)
        ended[game_id] = time.perf_counter()

    # Warm-up: one game scored end to end, so the consumer group has joined before the clock starts.
    play(games)
    while not client.exists(keys.match(f"g{games}")) or f"g{games}" not in delivered:
        await asyncio.sleep(0.05)
    warmup_records = scoring.loops[0].records
    lags: list[float] = []
    start = time.perf_counter()
    with ThreadPoolExecutor(writers) as pool:
        futures = [pool.submit(play, i) for i in range(games)]
        pending = {f"g{i}" for i in range(games)}
        while pending:
            for game_id in list(pending):
                if game_id in ended and client.exists(keys.match(game_id)):
                    lags.append(time.perf_counter() - ended[game_id])
                    pending.discard(game_id)
            await asyncio.sleep(0.005)
        for future in futures:
            future.result()
    elapsed = time.perf_counter() - start
    records = scoring.loops[0].records - warmup_records
    while len(delivered) <= games:
        await asyncio.sleep(0.05)
    bare_lags = sorted(delivered[f"g{i}"] - ended[f"g{i}"] for i in range(games))
    await asyncio.to_thread(bare.stop)
    await scoring.stop()
    replay = _replay(reader, Handlers(client, f"{prefix}:replay:"))
    reader.close()
    log.close()
    client.close()
    lags.sort()
    return {
        "p50_ms": statistics.median(lags) * 1000,
        "p99_ms": lags[int(len(lags) * 0.99) - 1] * 1000,
        "max_ms": lags[-1] * 1000,
        "bare_p50_ms": statistics.median(bare_lags) * 1000,
        "bare_p99_ms": bare_lags[int(len(bare_lags) * 0.99) - 1] * 1000,
        "records_per_s": records / elapsed,
        "games_per_s": games / elapsed,
        **replay,
    }


def _replay(reader: KafkaEventLog, handlers: Handlers) -> dict[str, float]:
    """Read the whole topic, then score it again from nothing in polls of POLL records."""
    start = time.perf_counter()
    records = [r for p in range(reader.partitions) for r in reader.read_partition(p)]
    read_s = time.perf_counter() - start
    start = time.perf_counter()
    for i in range(0, len(records), POLL):
        handlers.on_game_records(records[i : i + POLL])
    return {
        "replay_records": len(records),
        "replay_per_s": len(records) / (time.perf_counter() - start),
        "read_per_s": len(records) / read_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=500)
    parser.add_argument("--writers", type=int, default=8)
    args = parser.parse_args()
    with provide_kafka() as kafka, provide_redis() as redis_server:
        print(
            f"scoring: {args.games} games from {args.writers} writers (Kafka {kafka.origin})", file=sys.stderr
        )
        result = asyncio.run(run(kafka.address, redis_server.address, args.games, args.writers))
    print(
        f"scoring: lag from GameEnded appended to MatchScored readable: p50 {result['p50_ms']:.0f} ms,"
        f" p99 {result['p99_ms']:.0f} ms, max {result['max_ms']:.0f} ms; {result['records_per_s']:.0f} game"
        f" records/s applied ({result['games_per_s']:.1f} games/s offered by {args.writers} writers)"
    )
    print(
        f"scoring: baseline, a bare consumer group of the same topic in the same run: GameEnded delivered"
        f" p50 {result['bare_p50_ms']:.0f} ms, p99 {result['bare_p99_ms']:.0f} ms; scoring/baseline"
        f" p50 {result['p50_ms'] / result['bare_p50_ms']:.1f}x,"
        f" p99 {result['p99_ms'] / result['bare_p99_ms']:.1f}x"
    )
    print(
        f"scoring: replay of the topic's {result['replay_records']:.0f} records from nothing,"
        f" polls of {POLL}:"
        f" {result['replay_per_s']:.0f} records/s; baseline, reading them from Kafka:"
        f" {result['read_per_s']:.0f} records/s"
    )


if __name__ == "__main__":
    main()
