"""Kafka as a cluster: an engine on three KRaft nodes (replication 3, min ISR 2) while bots play games
through the SDK; one broker is SIGKILLed mid-play and restarted later. Play goes on with the broker
down and after it is back, every game reaches its end, and the game topic holds each acknowledged
action exactly where the engine acknowledged it: nothing lost, nothing twice.

The broker killed is the one leading the first game's partition, so at least that game's writer and
its in-flight transaction lose their leader; the others lose transaction coordinators and leaders as
the node's share of them moves. A second wave of games starts once the node is back.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaAdminClient
from kafka.admin import ConfigResource, ConfigResourceType
from rummy.game.v1 import game_service_pb2 as gs
from rummy_client import GameClient
from rummy_client.bots import BotPlayer
from rummy_identity.testing import IdentityProcess
from rummy_infra.kafka_cluster import KafkaCluster
from rummy_infra.local import free_port
from rummy_infra.serving import ServiceProcess
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.partitioning import partition_for

OPTIONS: dict[str, int | bool | str] = {"deals_per_match": 1}
WAVE = 2  # games a wave: the first loses its leader at the kill, the second wave starts once it is back


def _leaders(bootstrap: str, topic: str) -> tuple[dict[int, int], set[int], str]:
    """Each partition's leader (node id), the replica counts seen, and the topic's min.insync.replicas."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        (described,) = admin.describe_topics([topic])
        configs = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    finally:
        admin.close()
    partitions = described["partitions"]
    leaders = {p["partition_index"]: p["leader_id"] for p in partitions}
    min_isr = str(configs["topic"][topic]["min.insync.replicas"]["value"])
    return leaders, {len(p["replica_nodes"]) for p in partitions}, min_isr


async def _until(condition: Any, what: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


@pytest.mark.integration
def test_play_goes_on_through_a_broker_kill_and_restart(
    kafka_cluster: KafkaCluster, redis_url: str, unique_prefix: str, tmp_path: Path, identity: IdentityProcess
) -> None:
    players = [identity.player("ann"), identity.player("bob")]
    ids = [p.id for p in players]
    ops = identity.operator()
    topic = f"{unique_prefix}.rummy.game.events.v1"
    address = f"127.0.0.1:{free_port()}"
    env = {
        **os.environ,
        "KAFKA_BOOTSTRAP": kafka_cluster.bootstrap,
        "KAFKA_REPLICATION_FACTOR": "3",
        "KAFKA_MIN_INSYNC_REPLICAS": "2",
        "REDIS_URL": redis_url,
        "ENGINE_TOPIC": topic,
        "ENGINE_KEY_PREFIX": f"{unique_prefix}:",
        "ENGINE_ADDRESS": address,
        "ENGINE_TURN_TIMEOUT_MS": "0",
        "ENGINE_STORE_TIMEOUT_MS": "3000",
        **identity.service_env(),
    }
    engine = ServiceProcess("rummy_engine", env, address, tmp_path / "engine.log")
    engine.start(120)
    bots: dict[str, list[BotPlayer]] = {}
    acked_during_outage = 0

    async def scenario() -> None:
        nonlocal acked_during_outage
        clients = [GameClient(address, p.token, retry_for_s=90, timeout_s=10) for p in players]
        operator = GameClient(address, ops.token, retry_for_s=90, timeout_s=10)  # seats other people

        def acked() -> int:
            return sum(len(b.stats.acknowledged) for seats in bots.values() for b in seats)

        async def wave(name: str) -> list[asyncio.Task[gs.PlayerView]]:
            tasks = []
            for n in range(WAVE):
                game_id = f"{name}-{n}"
                await operator.create_game("rummy40", ids, game_id, options=OPTIONS)
                bots[game_id] = [BotPlayer(c, game_id, seat) for seat, c in enumerate(clients)]
                tasks += [asyncio.create_task(b.play()) for b in bots[game_id]]
            return tasks

        playing = await wave("first")
        await _until(lambda: acked() >= 8 * WAVE, "play before the kill", 60)
        leaders, _, _ = await asyncio.to_thread(_leaders, kafka_cluster.bootstrap, topic)
        victim = leaders[partition_for("first-0", len(leaders))] - 1  # node ids are 1-based
        kafka_cluster.kill(victim)
        before = acked()
        await _until(lambda: acked() >= before + 4 * WAVE, "play with a broker down", 60)
        acked_during_outage = acked() - before
        await asyncio.to_thread(kafka_cluster.restart, victim)
        playing += await wave("second")
        await asyncio.wait_for(asyncio.gather(*playing), 90)
        for client in (*clients, operator):
            await client.close()

    try:
        asyncio.run(scenario())
    finally:
        engine.stop()

    leaders, replicas, min_isr = _leaders(kafka_cluster.bootstrap, topic)
    assert (len(leaders), replicas, min_isr) == (64, {3}, "2")
    assert acked_during_outage >= 4 * WAVE
    log = KafkaEventLog(kafka_cluster.bootstrap, topic)
    try:
        for game_id, seats in bots.items():
            records = list(log.read_stream(game_id))
            by_seq = {r.seq: r.command_id for r in records}
            assert [r.seq for r in records] == list(range(1, len(records) + 1)), game_id  # no gap, no twice
            for bot in seats:
                assert bot.final is not None and bot.final.phase == gs.PHASE_GAME_OVER, game_id
                assert bot.final.seq == len(records), game_id
                for command_id, first, last in bot.stats.acknowledged:
                    if first == 0:  # accepted without an event
                        continue
                    held = [seq for seq, held_by in by_seq.items() if held_by == command_id]
                    assert held == list(range(first, last + 1)), (game_id, command_id, first, last, held)
    finally:
        log.close()
