"""Streams that stay up (issue 24 item 4): an engine process on real Kafka and Redis, many spectators.

2,000 spectators open WatchGame on a few games at once: each gets its first view, or, past the
engine's spectator limits (set low here), RESOURCE_EXHAUSTED `too_many_watchers` with a retry delay;
none ends CANCELLED (gRPC core cancelled calls of such a burst before the engine saw them). A spectator
that stops reading is dropped alone, with RESOURCE_EXHAUSTED `slow_reader` after what it was sent,
while another spectator of the same game follows every move.
"""

from __future__ import annotations

import asyncio
import collections
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from meldstream_benches.engine import UNLIMITED
from rummy.game.v1 import game_service_pb2 as gs
from rummy.game.v1 import game_service_pb2_grpc as gs_grpc
from rummy_client import GameClient
from rummy_client.bots import BotPlayer
from rummy_identity.testing import IdentityProcess
from rummy_infra.local import free_port
from rummy_infra.serving import ServiceProcess
from rummy_service.rate_limits import RETRY_TRAILER

pytestmark = pytest.mark.integration
WATCHERS = 2_000
GAMES = 4
PER_GAME = 450  # 4 x 450 > PER_ENGINE: both limits refuse some
PER_ENGINE = 1_500
MOVES = 40  # played while the slow reader does not read (more than its queue and windows hold)
QUEUE = 4  # updates a stream may fall behind (ENGINE_STREAM_QUEUE)
# A spectator's channel with small HTTP/2 windows, so that one not reading backs up into its queue
# after a few updates rather than after megabytes.
SMALL_WINDOWS = [("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", 1024)]


@pytest.fixture
def engine(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str, tmp_path: Path, identity: IdentityProcess
) -> Iterator[ServiceProcess]:
    env = {
        **os.environ,
        **UNLIMITED,  # every spectator here is one account
        "MELDSTREAM_LIMIT_PER_ACCOUNT": "1000000/second",
        "KAFKA_BOOTSTRAP": kafka_bootstrap,
        "REDIS_URL": redis_url,
        "ENGINE_TOPIC": f"{unique_prefix}.rummy.game.events.v1",
        "ENGINE_KEY_PREFIX": f"{unique_prefix}:",
        "ENGINE_ADDRESS": f"127.0.0.1:{free_port()}",
        "ENGINE_TURN_TIMEOUT_MS": "0",
        "ENGINE_SEED_KEY": f"{unique_prefix}-seed-key",
        "ENGINE_MAX_WATCHERS_PER_GAME": str(PER_GAME),
        "ENGINE_MAX_WATCHERS": str(PER_ENGINE),
        "ENGINE_STREAM_QUEUE": str(QUEUE),
        **identity.service_env(),
    }
    process = ServiceProcess("rummy_engine", env, env["ENGINE_ADDRESS"], tmp_path / "engine.log")
    process.start()
    yield process
    process.stop()


async def _create(
    engine: ServiceProcess, identity: IdentityProcess, count: int
) -> tuple[list[str], list[str]]:
    players = [identity.player(name) for name in ("ann", "bob", "cyd")]
    async with GameClient(engine.address, identity.operator().token) as operator:
        games = [
            (await operator.create_game("rummy40", [p.id for p in players])).game_id for _ in range(count)
        ]
    return games, [p.id for p in players]


def test_a_crowd_of_spectators_gets_views_or_a_retry_delay(
    engine: ServiceProcess, identity: IdentityProcess
) -> None:
    async def run() -> collections.Counter[str]:
        games, _ = await _create(engine, identity, GAMES)
        metadata = (("authorization", f"Bearer {identity.player('dee').token()}"),)
        outcomes: collections.Counter[str] = collections.Counter()
        calls: list[Any] = []
        async with grpc.aio.insecure_channel(engine.address) as channel:
            stub: Any = gs_grpc.GameServiceStub(channel)

            async def watch(n: int) -> None:
                call = stub.WatchGame(gs.WatchGameRequest(game_id=games[n % GAMES]), metadata=metadata)
                calls.append(call)
                try:
                    async for message in call:
                        assert message.update.view.game_id == games[n % GAMES]
                        outcomes["view"] += 1
                        return
                except grpc.aio.AioRpcError as error:
                    trailers = dict(error.trailing_metadata() or ())
                    delay = int(trailers.get(RETRY_TRAILER, "0"))
                    outcomes[f"{error.code().name} {(error.details() or '')[:17]} delay {delay > 0}"] += 1

            await asyncio.wait_for(asyncio.gather(*(watch(n) for n in range(WATCHERS))), 60)
            for call in calls:
                call.cancel()
        return outcomes

    outcomes = asyncio.run(run())
    assert outcomes == {
        "view": PER_ENGINE,
        "RESOURCE_EXHAUSTED too_many_watchers delay True": WATCHERS - PER_ENGINE,
    }, outcomes


def test_a_slow_reader_is_dropped_alone(engine: ServiceProcess, identity: IdentityProcess) -> None:
    async def run() -> tuple[list[int], str, list[int], int]:
        (game_id,), _ = await _create(engine, identity, 1)
        token = identity.player("dee").token
        metadata = (("authorization", f"Bearer {token()}"),)
        followed: list[int] = []
        clients = [GameClient(engine.address, identity.player(n).token) for n in ("ann", "bob", "cyd")]
        async with (
            grpc.aio.insecure_channel(engine.address, options=SMALL_WINDOWS) as slow_channel,
            GameClient(engine.address, token) as follower,
        ):
            slow: Any = gs_grpc.GameServiceStub(slow_channel).WatchGame(
                gs.WatchGameRequest(game_id=game_id), metadata=metadata
            )
            first = await slow.read()  # then it stops reading while the game is played
            bots = [
                asyncio.create_task(BotPlayer(c, game_id, s, "random").play()) for s, c in enumerate(clients)
            ]

            async def follow() -> None:
                async for update in follower.updates(game_id):
                    followed.append(update.seq)

            following = asyncio.create_task(follow())
            while len(followed) < MOVES:
                await asyncio.sleep(0.05)
                assert not following.done(), "the game ended before the slow reader fell behind"
            received = [first.update.seq]
            reason = ""
            try:
                while (message := await slow.read()) is not grpc.aio.EOF:
                    received.append(message.update.seq)
            except grpc.aio.AioRpcError as error:
                reason = f"{error.code().name} {error.details()}"
            dropped_at = len(followed)
            await asyncio.sleep(1.0)  # the game goes on, and the other spectator follows it
            for task in (*bots, following):
                task.cancel()
            await asyncio.gather(*bots, following, return_exceptions=True)
            for client in clients:
                await client.close()
        return received, reason, followed, dropped_at

    received, reason, followed, dropped_at = asyncio.run(run())
    assert reason.startswith("RESOURCE_EXHAUSTED slow_reader"), reason
    assert followed == list(range(followed[0], followed[-1] + 1)), "the other spectator missed a move"
    assert len(followed) > dropped_at, "the other spectator stopped with the slow reader"
    assert received[-1] < followed[-1], "the slow reader was sent the whole game"
    assert received == list(range(received[0], received[-1] + 1)), "the slow reader skipped a move"
