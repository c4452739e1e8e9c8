"""Tokens expire: an expired one is refused UNAUTHENTICATED `token_expired` saying to get a new one, by
the engine and by the web gateway; a client that renews its token (`RenewingToken`) keeps playing past
the lifetime of any one token, as bots and the engine's own forwarding do through a long game."""

from __future__ import annotations

import asyncio
import json
import re
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import grpc
import pytest
from meldstream_web.config import WebConfig
from meldstream_web.server import start_gateway
from rummy_client import GameClient, RpcFailure
from rummy_engine.config import EngineConfig
from rummy_engine.engine import start_engine
from rummy_infra.local import free_port
from rummy_service.auth import DEV_SECRET, EXPIRED, TokenIssuer

TOKENS = TokenIssuer(DEV_SECRET)


def test_the_engine_refuses_an_expired_token_and_a_renewing_client_plays_on(tmp_path: Path) -> None:
    short = TokenIssuer(DEV_SECRET, ttl_s=2)  # a lifetime a test can outlast

    async def main() -> None:
        engine = await start_engine(EngineConfig(address="127.0.0.1:0", data_dir=str(tmp_path)))
        try:
            async with GameClient(engine.address, TOKENS.issue("ann")) as ann:
                game = (await ann.create_game("rummy500", ["ann", "bob"])).game_id
            past = TOKENS.issue("ann", expires_at=int(time.time()) - 30)
            async with GameClient(engine.address, past, retry_for_s=0) as stale:
                with pytest.raises(RpcFailure) as refused:
                    await stale.view(game, 0)
            assert refused.value.status == grpc.StatusCode.UNAUTHENTICATED
            assert refused.value.code == EXPIRED
            assert re.search(r"token expired 3\d s ago: get a new one", refused.value.details)
            async with (
                GameClient(engine.address, short.issue("ann"), retry_for_s=0) as once,
                GameClient(engine.address, short.renewing("ann"), retry_for_s=0) as renewing,
            ):
                await once.view(game, 0)
                await renewing.view(game, 0)
                await asyncio.sleep(2.5)  # past the first token of each
                assert (await renewing.view(game, 0)).seats[0].player_id == "ann"
                with pytest.raises(RpcFailure) as expired:
                    await once.view(game, 0)
                assert expired.value.code == EXPIRED
        finally:
            await engine.stop()

    asyncio.run(main())


def _call(url: str, method: str = "GET", body: object = None, token: str = "") -> tuple[int, Any]:
    request = urllib.request.Request(url, None if body is None else json.dumps(body).encode(), method=method)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_the_gateway_says_when_a_token_expires_and_refuses_it_after(tmp_path: Path) -> None:
    async def main() -> tuple[tuple[int, Any], tuple[int, Any]]:
        config = WebConfig(address=f"127.0.0.1:{free_port()}", token_ttl_s=900)
        gateway = await start_gateway(config)
        try:
            signed = await asyncio.to_thread(_call, f"{gateway.url}/api/signin", "POST", {"name": "zoe"})
            past = TOKENS.issue("zoe", expires_at=int(time.time()) - 5)
            refused = await asyncio.to_thread(_call, f"{gateway.url}/api/rating", "GET", None, past)
            return signed, refused
        finally:
            await gateway.stop()

    before = time.time()
    (status, signed), (refused_status, refused) = asyncio.run(main())
    assert status == 200
    assert before + 898 <= signed["expires_at"] <= time.time() + 900  # the app renews before then
    assert TOKENS.claims(signed["token"], time.time())[1] == signed["expires_at"]
    assert refused_status == 401
    assert refused["code"] == EXPIRED and "get a new one" in refused["message"]
