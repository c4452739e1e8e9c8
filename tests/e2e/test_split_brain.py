"""Split brain, with real processes: an engine paused past its session, a second takes its partitions
and plays on, the first resumes and tries to write. Nothing it writes may count: the broker fences its
transactional producer, so the log holds one gap-free history with each command once.

The scenario the outside fault test ran against the Redis lease (it got the same command at the same
seq twice, 4 runs of 4): the client's command reaches the paused engine, times out, fails over to
the new owner with the same command id, and the old engine then acts on its stale copy of the game.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import grpc
import pytest
from rummy.game.v1 import game_service_pb2 as gs
from rummy_client import GameClient, RpcFailure
from rummy_identity.testing import IdentityProcess, Player
from rummy_infra.local import free_port
from rummy_infra.serving import ServiceProcess
from rummy_store.kafka_log import KafkaEventLog

DRAW = gs.Action(draw_from_stock=gs.DrawFromStock())


def _engine(env: dict[str, str], log: Path) -> ServiceProcess:
    address = f"127.0.0.1:{free_port()}"
    return ServiceProcess("rummy_engine", {**env, "ENGINE_ADDRESS": address}, address, log)


@pytest.mark.integration
def test_a_paused_engine_that_resumes_writes_nothing(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str, tmp_path: Path, identity: IdentityProcess
) -> None:
    ann, bob, ops = identity.player("ann"), identity.player("bob"), identity.operator()
    players = [ann, bob]
    topic = f"{unique_prefix}.rummy.game.events.v1"
    env = {
        **os.environ,
        "KAFKA_BOOTSTRAP": kafka_bootstrap,
        "REDIS_URL": redis_url,
        "ENGINE_TOPIC": topic,
        "ENGINE_KEY_PREFIX": f"{unique_prefix}:",
        "ENGINE_TURN_TIMEOUT_MS": "0",
        **identity.service_env(),
    }
    old, new = _engine(env, tmp_path / "old.log"), _engine(env, tmp_path / "new.log")

    async def scenario() -> None:
        def client(engine: ServiceProcess, player: Player, retry_for_s: float) -> GameClient:
            return GameClient(engine.address, player.token, retry_for_s=retry_for_s, timeout_s=2)

        created = await client(old, ops, 30).create_game("rummy40", [p.id for p in players], "split")
        seat = created.view.turn
        mover = players[seat]
        drawn = await client(old, mover, 30).submit("split", seat, DRAW, "draw-1", include_view=True)
        discard = gs.Action(discard=gs.Discard(card=drawn.view.hand[0]))

        old.signal(signal.SIGSTOP)  # paused: no heartbeats, no answers
        with pytest.raises(RpcFailure):  # the client's command reaches it and times out
            await client(old, mover, 0).submit("split", seat, discard, "discard-1")
        await asyncio.to_thread(new.start, 90)  # SERVING once the group gave it the partitions
        failover = await client(new, mover, 30).submit("split", seat, discard, "discard-1")
        assert (failover.first_seq, failover.duplicate) == (4, False)

        old.signal(signal.SIGCONT)  # it resumes with its stale copy of the game, and tries to write
        stale = gs.Action(discard=gs.Discard(card=drawn.view.hand[1]))
        with pytest.raises(RpcFailure) as refused:
            await client(old, mover, 0).submit("split", seat, stale, "discard-stale")
        assert refused.value.status is grpc.StatusCode.UNAVAILABLE
        assert refused.value.code == "not_owner"
        await asyncio.sleep(1)  # let anything the resumed engine had queued reach the broker

    old.start()
    try:
        asyncio.run(scenario())
    finally:
        new.stop()
        old.stop()
    log = KafkaEventLog(kafka_bootstrap, topic, 3)
    try:
        records = list(log.read_stream("split"))
    finally:
        log.close()
    assert [r.seq for r in records] == [1, 2, 3, 4]
    assert [r.command_id for r in records][2:] == ["draw-1", "discard-1"]
