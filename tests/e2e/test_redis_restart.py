"""Redis killed mid-play and started again empty: on Kafka it is only the engine's cache (snapshots,
partition checkpoints), so play goes on, health stays SERVING, and no call answers UNKNOWN.

Issue 12 found 90 calls answered UNKNOWN (a redis ConnectionError escaping a game's load), which the SDK
does not retry, so bot games died. Now a load folds from the log when the snapshot store fails, a failed
snapshot save is one log line, and the only call that needs Redis (creating a game, which must tell a
long-ended game from a new one by its final snapshot) answers UNAVAILABLE with its reason.
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import grpc
import pytest
import redis
from grpc_health.v1 import health_pb2, health_pb2_grpc
from rummy.game.v1 import game_service_pb2 as gs
from rummy_client import GameClient, RpcFailure
from rummy_contracts.projection import EngineState, GameProjection
from rummy_identity.testing import IdentityProcess, Player
from rummy_infra.local import free_port, restartable_redis
from rummy_infra.serving import ServiceProcess
from rummy_store.catch_up import CatchUpReader
from rummy_store.kafka_log import KafkaEventLog

GAMES = ["cache-a", "cache-b"]
IDLE_EVICT_MS = 150
T = TypeVar("T")


def _health(address: str) -> int:
    with grpc.insecure_channel(address) as channel:
        stub: Any = health_pb2_grpc.HealthStub(channel)
        return int(stub.Check(health_pb2.HealthCheckRequest(), timeout=2).status)


class Table:
    """The players' clients (by account id) and the operator's, who creates the tables, with every
    refusal they met (none may be UNKNOWN)."""

    def __init__(self, address: str, players: list[Player], ops: Player, refusals: list[RpcFailure]) -> None:
        self.players = [p.id for p in players]
        self.clients = {p.id: GameClient(address, p.token, retry_for_s=0, timeout_s=20) for p in players}
        self.ops = GameClient(address, ops.token, retry_for_s=0, timeout_s=20)
        self.refusals = refusals

    async def call(self, make: Callable[[], Awaitable[T]]) -> T:
        """One call, retried while UNAVAILABLE (as the SDK does); any other refusal fails the test."""
        deadline = time.monotonic() + 30
        while True:
            try:
                return await make()
            except RpcFailure as failure:
                self.refusals.append(failure)
                assert failure.status is grpc.StatusCode.UNAVAILABLE, failure
                assert time.monotonic() < deadline, failure
                await asyncio.sleep(0.3)

    async def move(self, game_id: str) -> gs.SubmitActionResponse:
        """After the game left memory (idle eviction), the next move of whoever is to play."""
        await asyncio.sleep(IDLE_EVICT_MS / 1000 * 3)
        ann = self.clients[self.players[0]]
        view = await self.call(lambda: ann.view(game_id))
        player = self.clients[self.players[view.turn]]
        if view.phase == gs.PHASE_DRAW:
            action = gs.Action(draw_from_stock=gs.DrawFromStock())
        else:
            seated = await self.call(lambda: player.view(game_id, view.turn))
            action = gs.Action(discard=gs.Discard(card=seated.hand[0]))
        command_id = f"{game_id}-{view.seq}"
        return await self.call(lambda: player.submit(game_id, view.turn, action, command_id))

    async def close(self) -> None:
        for client in (*self.clients.values(), self.ops):
            await client.close()


@pytest.mark.integration
def test_play_goes_on_while_redis_is_down_and_after_it_comes_back_empty(
    kafka_bootstrap: str, unique_prefix: str, tmp_path: Path, identity: IdentityProcess
) -> None:
    players = [identity.player("ann"), identity.player("bob")]
    ids = [p.id for p in players]
    operator = identity.operator()
    topic = f"{unique_prefix}.rummy.game.events.v1"
    prefix = f"{unique_prefix}:"
    with restartable_redis() as cache:
        address = f"127.0.0.1:{free_port()}"
        env = {
            **os.environ,
            "KAFKA_BOOTSTRAP": kafka_bootstrap,
            "REDIS_URL": cache.url,
            "ENGINE_TOPIC": topic,
            "ENGINE_KEY_PREFIX": prefix,
            "ENGINE_ADDRESS": address,
            "ENGINE_TURN_TIMEOUT_MS": "0",
            "ENGINE_SNAPSHOT_EVERY": "4",
            "ENGINE_IDLE_EVICT_MS": str(IDLE_EVICT_MS),
            "ENGINE_STORE_TIMEOUT_MS": "3000",
            **identity.service_env(),
        }
        engine = ServiceProcess("rummy_engine", env, address, tmp_path / "engine.log")
        engine.start(90)
        refusals: list[RpcFailure] = []

        async def scenario() -> dict[str, int]:
            table = Table(address, players, operator, refusals)
            ops = table.ops
            for game_id in GAMES:
                await table.call(functools.partial(ops.create_game, "rummy40", ids, game_id))
            for _ in range(5):  # a snapshot at seq 4 of each, then 5 more events
                for game_id in GAMES:
                    await table.move(game_id)

            cache.kill()
            down = time.monotonic()
            for _ in range(5):  # each move loads its game again: no snapshot store, fold from the log
                for game_id in GAMES:
                    await table.move(game_id)
            try:  # a new game can need the snapshot store (a long-ended game is known by its last one)
                await ops.create_game("rummy40", ids, "cache-new")
            except RpcFailure as failure:
                assert failure.status is grpc.StatusCode.UNAVAILABLE, failure
            await asyncio.sleep(max(0.0, down + 3 - time.monotonic()))  # the health probe has seen it
            assert _health(address) == health_pb2.HealthCheckResponse.SERVING

            await asyncio.to_thread(cache.start)  # empty
            await table.call(functools.partial(ops.create_game, "rummy40", ids, "cache-new"))
            for _ in range(5):
                for game_id in [*GAMES, "cache-new"]:
                    await table.move(game_id)
            seqs = {g: (await table.call(functools.partial(ops.view, g))).seq for g in [*GAMES, "cache-new"]}
            await table.close()
            return seqs

        try:
            seqs = asyncio.run(scenario())
        finally:
            engine.stop()
        assert all(f.status is grpc.StatusCode.UNAVAILABLE for f in refusals)

        # What the engine answered is what the log holds, folded from event 1 without any snapshot.
        with KafkaEventLog(kafka_bootstrap, topic, 3) as log:
            reader: CatchUpReader[EngineState | None] = CatchUpReader(log, GameProjection())
            for game_id, seq in seqs.items():
                loaded = reader.load(game_id)
                assert loaded.seq == seq and reader.skipped == 0
        client = redis.Redis.from_url(cache.url)
        try:  # snapshots were saved again once Redis was back (each game crossed a multiple of 4 since)
            assert all(client.exists(f"{prefix}game:{g}:snapshot") for g in seqs)
        finally:
            client.close()

    text = (tmp_path / "engine.log").read_text()
    assert "Traceback" not in text and "never retrieved" not in text, text[-3000:]
    assert "snapshot unusable" in text and "not saved" in text
    assert "snapshot store does not answer" in text and "snapshot store answers again" in text
