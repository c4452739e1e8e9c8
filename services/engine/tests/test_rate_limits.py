"""A burst from one account is refused with the delay to wait, while another account plays on."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
from rummy.game.v1 import game_service_pb2 as gs
from rummy.game.v1 import game_service_pb2_grpc as gs_grpc
from rummy_engine.config import EngineConfig
from rummy_service.rate_limits import LimitSettings

from .conftest import People
from .test_service import NO_TIMER, started


def test_a_burst_from_one_account_is_limited_and_another_plays_on(
    people: People, stores: dict[str, Any]
) -> None:
    async def scenario() -> None:
        limits = LimitSettings(account="5/second", address="100/second")
        engine = await started(EngineConfig(address="127.0.0.1:0", limits=limits, **stores))
        try:
            ops = people.client(engine.address, people.ops)
            await ops.create_game("rummy40", people.ids, "limited", turn_timeout_ms=NO_TIMER)
            ann, bob, _ = people.players
            async with grpc.aio.insecure_channel(engine.address) as channel:
                stub: Any = gs_grpc.GameServiceStub(channel)
                verify = gs.VerifyShuffleRequest(game_id="limited")
                refused = []
                for _ in range(12):  # counted in the shared store: a call that is not a move
                    try:
                        await stub.VerifyShuffle(verify, metadata=ann.auth())
                    except grpc.aio.AioRpcError as error:
                        refused.append(error)
                limited = [e for e in refused if e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED]
                assert limited, [e.details() for e in refused]
                trailers = dict(limited[0].trailing_metadata() or ())
                assert 0 < int(trailers["retry-after-ms"]) <= 1000
                assert (limited[0].details() or "").startswith("rate_limited:")
                # bob is untouched: his own account's count
                turn = (await ops.view("limited")).turn
                view = gs.GetViewRequest(game_id="limited", seat=people.ids.index(bob.id))
                assert (await stub.GetView(view, metadata=bob.auth())).view.game_id == "limited"
                assert turn in range(3)
            await ops.close()
        finally:
            await engine.stop()

    asyncio.run(scenario())
