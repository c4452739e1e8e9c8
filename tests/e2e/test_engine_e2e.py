"""End to end: the engine as a process on real Kafka and Redis, bots over gRPC, a SIGKILL mid-game.

Complete games of every playable variant are played by bots through the client SDK while spectators
watch; the engine is killed with SIGKILL mid-game and started again. Then: every acknowledged action is
in the log at the seqs it was acknowledged with, every game finished, every stream resumed without a
gap or a repeat, no message leaked a hidden card, replaying each log (from event 1, and from the Redis
snapshot plus tail) reproduces the final state and scores, and each shuffle verifies. A game left
unfinished has its seed nowhere in the raw topic or in Redis (a finished game's is, in GameEnded).
"""

from __future__ import annotations

import asyncio
import base64
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from kafka import KafkaConsumer, TopicPartition
from rummy.game.v1 import game_service_pb2 as gs
from rummy_client import GameClient
from rummy_client.bots import BotPlayer
from rummy_contracts.projection import EngineState, GameProjection
from rummy_engine.audit import action_leaks, leaks, states_by_seq
from rummy_engine.seeds import game_seed
from rummy_identity.testing import IdentityProcess, Player
from rummy_infra.local import free_port
from rummy_infra.serving import ServiceProcess
from rummy_rules.variants import PLAYABLE_VARIANTS
from rummy_store.catch_up import CatchUpReader
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.redis_snapshots import RedisSnapshotStore

OPTIONS: dict[str, dict[str, int | bool | str]] = {"rummy40": {"deals_per_match": 1}}
UNFINISHED = "e2e-unfinished"


@pytest.fixture
def engine(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str, tmp_path: Path, identity: IdentityProcess
) -> Iterator[ServiceProcess]:
    env = {
        **os.environ,
        "KAFKA_BOOTSTRAP": kafka_bootstrap,
        "REDIS_URL": redis_url,
        "ENGINE_TOPIC": f"{unique_prefix}.rummy.game.events.v1",
        "ENGINE_KEY_PREFIX": f"{unique_prefix}:",
        "ENGINE_ADDRESS": f"127.0.0.1:{free_port()}",
        "ENGINE_SNAPSHOT_EVERY": "10",
        "ENGINE_TURN_TIMEOUT_MS": "0",
        "ENGINE_SEED_KEY": f"{unique_prefix}-seed-key",
        **identity.service_env(),
    }
    process = ServiceProcess("rummy_engine", env, env["ENGINE_ADDRESS"], tmp_path / "engine.log")
    process.start()
    yield process
    process.stop()


async def _play(
    engine: ServiceProcess, players: list[Player], watching: Player, ops: Player
) -> tuple[dict[str, list[BotPlayer]], dict[str, list[gs.GameUpdate]], int]:
    ids = [p.id for p in players]
    clients = [GameClient(engine.address, p.token, retry_for_s=90) for p in players]
    watcher = GameClient(engine.address, watching.token, retry_for_s=90)
    operator = GameClient(engine.address, ops.token, retry_for_s=90)  # seats other people
    games: dict[str, list[BotPlayer]] = {}
    watched: dict[str, list[gs.GameUpdate]] = {}
    tasks: list[asyncio.Task[object]] = []

    async def watch(game_id: str) -> None:
        async for update in watcher.updates(game_id):
            watched[game_id].append(update)

    for variant in PLAYABLE_VARIANTS:
        game_id = f"e2e-{variant}"
        await operator.create_game(variant, ids, game_id, options=OPTIONS.get(variant))
        games[game_id] = [BotPlayer(client, game_id, seat, keep=True) for seat, client in enumerate(clients)]
        watched[game_id] = []
        tasks += [asyncio.create_task(bot.play()) for bot in games[game_id]]
        tasks.append(asyncio.create_task(watch(game_id)))

    def progress() -> int:
        return min(max((m.seq for m in bots[0].stats.messages), default=0) for bots in games.values())

    await _leave_unfinished(operator, clients, ids, UNFINISHED)
    while progress() < 12:  # every game is under way ...
        await asyncio.sleep(0.05)
    killed_at = progress()
    engine.kill()  # ... and none has ended (checked below: each goes on well past this seq)
    await asyncio.sleep(0.5)
    await asyncio.to_thread(engine.start)
    done, pending = await asyncio.wait(tasks, timeout=300, return_when=asyncio.FIRST_EXCEPTION)
    for task in pending:
        task.cancel()
    for task in done:
        task.result()  # a bot or watcher that failed fails the test now, not at the timeout
    assert not pending, f"{len(pending)} bots or watchers still waiting after 300 s"
    for client in (*clients, watcher, operator):
        await client.close()
    return games, watched, killed_at


async def _leave_unfinished(
    operator: GameClient, clients: list[GameClient], ids: list[str], game_id: str
) -> None:
    """Twelve draws and discards in a game nobody finishes (a snapshot is taken at seq 10)."""
    await operator.create_game("kalooki", ids, game_id)
    for _ in range(12):
        turn = (await clients[0].view(game_id)).turn
        listed = await clients[turn].legal_actions(game_id, turn)
        kinds = ("draw_from_stock", "discard")
        action = next(a for a in listed.actions if a.WhichOneof("kind") in kinds)
        await clients[turn].submit(game_id, turn, action)


def _raw_topic(bootstrap: str, topic: str) -> list[bytes]:
    """Every record of the topic as raw bytes: key, value and headers."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    try:
        parts = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        consumer.assign(parts)
        consumer.seek_to_beginning(*parts)
        end = consumer.end_offsets(parts)
        raw: list[bytes] = []
        while any(consumer.position(tp) < end[tp] for tp in parts):
            for records in consumer.poll(timeout_ms=1000).values():
                for r in records:
                    raw.append((r.key or b"") + (r.value or b"") + b"".join(v for _, v in r.headers))
        return raw
    finally:
        consumer.close()


def _raw_redis(client: redis.Redis, prefix: str) -> list[bytes]:
    """Every value under the engine's key prefix (snapshots, fence records), whatever its type."""
    values: list[Any] = []
    for key in client.scan_iter(match=f"{prefix}*"):
        kind = client.type(key)
        if kind == b"hash":
            values += [part for item in client.hgetall(key).items() for part in item]
        elif kind == b"string":
            values.append(client.get(key))
        elif kind == b"list":
            values += client.lrange(key, 0, -1)
        elif kind == b"set":
            values += client.smembers(key)
        elif kind == b"zset":
            values += client.zrange(key, 0, -1)
    return [v if isinstance(v, bytes) else str(v).encode() for v in values]


def _holds(chunks: list[bytes], seed: bytes) -> bool:
    forms = (seed, seed.hex().encode(), base64.b64encode(seed), base64.urlsafe_b64encode(seed))
    return any(form in chunk for chunk in chunks for form in forms)


async def _history(engine: ServiceProcess, ops: Player, game_id: str) -> gs.GetHistoryResponse:
    async with GameClient(engine.address, ops.token) as operator:
        return await operator.history(game_id)


async def _verify(engine: ServiceProcess, ops: Player, game_id: str) -> gs.VerifyShuffleResponse:
    async with GameClient(engine.address, ops.token) as operator:
        return await operator.verify_shuffle(game_id)


@pytest.mark.integration
@pytest.mark.slow
def test_bots_play_every_variant_through_a_sigkill_on_kafka_and_redis(
    engine: ServiceProcess,
    kafka_bootstrap: str,
    redis_url: str,
    unique_prefix: str,
    identity: IdentityProcess,
) -> None:
    players = [identity.player(name) for name in ("ann", "bob", "cyd")]
    ops = identity.operator()
    games, watched, killed_at = asyncio.run(_play(engine, players, identity.player("watcher"), ops))
    assert killed_at >= 12
    projection = GameProjection()
    client = redis.Redis.from_url(redis_url)
    log = KafkaEventLog(kafka_bootstrap, engine.env["ENGINE_TOPIC"], 3)
    try:
        for game_id, bots in games.items():
            history = asyncio.run(_history(engine, ops, game_id))
            truth = states_by_seq(history.entries)
            last = max(truth)
            final = truth[last]
            by_seq = {entry.event.seq: entry.event.command_id for entry in history.entries}
            assert sorted(by_seq) == list(range(1, last + 1)) and last > killed_at + 5
            for bot in bots:
                # Every acknowledged action is in the log where it was acknowledged.
                assert bot.stats.acknowledged
                for command_id, first, last_seq in bot.stats.acknowledged:
                    assert first > 0, command_id  # every accepted action appends (a PassBuy too, D27)
                    assert all(by_seq[seq] == command_id for seq in range(first, last_seq + 1))
                # The stream resumed across the restart: every seq once, in order, to the end.
                seqs = [m.seq for m in bot.stats.messages]
                assert seqs == sorted(set(seqs)) and seqs[-1] == last
                assert bot.final is not None and list(bot.final.totals) == list(final.totals)
                assert list(bot.final.winners) == list(final.winners)
            for seat, bot in enumerate(bots):
                assert not leaks(bot.stats.messages, seat, truth)
                assert not action_leaks(bot.stats.messages, seat, truth)
            assert watched[game_id] and not leaks(watched[game_id], None, truth)
            assert not action_leaks(watched[game_id], None, truth)
            # Replaying the log reproduces the final state: from event 1, and from the snapshot + tail.
            scratch = CatchUpReader[EngineState | None](log, projection).load(game_id)
            assert scratch.state is not None and scratch.state.game == final and scratch.seq == last
            snapshots = RedisSnapshotStore(client, engine.env["ENGINE_KEY_PREFIX"])
            cached = CatchUpReader[EngineState | None](log, projection, snapshots, 10).load(game_id)
            assert cached.from_snapshot > 0 and cached.state is not None and cached.state.game == final
            # The revealed seed is the engine's derivation, and it re-derives every deal.
            check = asyncio.run(_verify(engine, ops, game_id))
            assert check.verified and check.seed == game_seed(engine.env["ENGINE_SEED_KEY"], game_id)
        # The seed of a game still in play is in no record and no Redis value; a finished game's is
        # (GameEnded reveals it), which shows the scan would find one.
        key = engine.env["ENGINE_SEED_KEY"]
        topic = _raw_topic(kafka_bootstrap, engine.env["ENGINE_TOPIC"])
        stored = _raw_redis(client, engine.env["ENGINE_KEY_PREFIX"])
        assert RedisSnapshotStore(client, engine.env["ENGINE_KEY_PREFIX"]).load(UNFINISHED) is not None
        assert not _holds(topic, game_seed(key, UNFINISHED))
        assert not _holds(stored, game_seed(key, UNFINISHED))
        assert all(_holds(topic, game_seed(key, game_id)) for game_id in games)
    finally:
        log.close()
        client.close()
