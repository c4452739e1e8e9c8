"""Tokens expire: an expired one is refused UNAUTHENTICATED `token_expired` saying to refresh it, by the
engine and by the web gateway; a client that renews its token (`RenewingToken`) keeps playing past the
lifetime of any one token, and the gateway renews a browser's session from its refresh cookie.

The tokens come from an identity service of this module's own whose access tokens live 10 s (its
minimum), a lifetime a test can outlast; the session's identity gives 10 minutes."""

from __future__ import annotations

import asyncio
import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

import grpc
import pytest
from meldstream_web.config import WebConfig
from meldstream_web.server import start_gateway
from rummy_client import GameClient, RpcFailure
from rummy_engine.config import EngineConfig
from rummy_engine.engine import start_engine
from rummy_identity.testing import PASSWORD, IdentityProcess, running_identity
from rummy_infra.local import free_port
from rummy_service.auth import EXPIRED
from rummy_service.public_keys import verifier

TTL_S = 10


@pytest.fixture(scope="module")
def short() -> Iterator[IdentityProcess]:
    with running_identity({"IDENTITY_ACCESS_TTL_S": str(TTL_S)}) as identity:
        yield identity


def _until(expires_at: float, after_s: float = 1.5) -> float:
    """Seconds to sleep until `after_s` past `expires_at`."""
    return max(0.0, expires_at + after_s - time.time())


def test_the_engine_refuses_an_expired_token_and_a_renewing_client_plays_on(
    tmp_path: Path, short: IdentityProcess
) -> None:
    ann, bob = short.player("ann"), short.player("bob")
    session = short.client.sign_in("ann", PASSWORD, device="tests")  # a token never renewed
    fixed, expires_at = session.access_token, session.access_expires_at

    async def main() -> None:
        config = EngineConfig(address="127.0.0.1:0", data_dir=str(tmp_path), identity=short.address)
        engine = await start_engine(config)
        try:
            async with GameClient(engine.address, short.operator().token) as ops:
                game = (await ops.create_game("rummy500", [ann.id, bob.id])).game_id
            async with (
                GameClient(engine.address, fixed, retry_for_s=0) as once,
                GameClient(engine.address, ann.token, retry_for_s=0) as renewing,
            ):
                await once.view(game, 0)
                await renewing.view(game, 0)
                await asyncio.sleep(_until(expires_at))  # past the first token of each
                assert (await renewing.view(game, 0)).seats[0].player_id == ann.id
                with pytest.raises(RpcFailure) as expired:
                    await once.view(game, 0)
            assert expired.value.status == grpc.StatusCode.UNAUTHENTICATED
            assert expired.value.code == EXPIRED
            assert re.search(r"token expired \d s ago: refresh it", expired.value.details)
        finally:
            await engine.stop()

    asyncio.run(main())


Answer = tuple[int, Any, SimpleCookie]


def _call(
    url: str, method: str = "GET", body: object = None, *, token: str = "", cookies: str = "", csrf: str = ""
) -> Answer:
    request = urllib.request.Request(url, None if body is None else json.dumps(body).encode(), method=method)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    if cookies:
        request.add_header("Cookie", cookies)
    if csrf:
        request.add_header("X-CSRF-Token", csrf)
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            status, text, headers = reply.status, reply.read(), reply.headers
    except urllib.error.HTTPError as error:
        status, text, headers = error.code, error.read(), error.headers
    jar: SimpleCookie = SimpleCookie()
    for header in headers.get_all("Set-Cookie") or ():
        jar.load(header)
    return status, json.loads(text), jar


def test_the_gateway_says_when_a_token_expires_and_renews_a_session(short: IdentityProcess) -> None:
    """Signed in, the browser holds an access token of identity's lifetime; once it has expired, a
    bearer token is refused saying so, while the session's cookies get a new one from the gateway."""

    async def main() -> tuple[Answer, Answer, Answer]:
        config = WebConfig(address=f"127.0.0.1:{free_port()}", identity=short.address)
        gateway = await start_gateway(config)
        url = gateway.url
        try:
            csrf = (await asyncio.to_thread(_call, f"{url}/api/variants"))[2]["ms_csrf"].value
            account = {"name": "zoe", "password": PASSWORD}
            signed = await asyncio.to_thread(
                _call, f"{url}/api/signup", "POST", account, cookies=f"ms_csrf={csrf}", csrf=csrf
            )
            cookies = "; ".join(f"{k}={m.value}" for k, m in signed[2].items())
            await asyncio.sleep(_until(signed[1]["expires_at"]))
            access = signed[2]["ms_access"].value
            refused = await asyncio.to_thread(_call, f"{url}/api/rating", token=access)
            renewed = await asyncio.to_thread(_call, f"{url}/api/me", cookies=cookies)
            return signed, refused, renewed
        finally:
            await gateway.stop()

    before = time.time()
    (status, signed, cookies), (refused_status, refused, _), (me_status, me, renewed) = asyncio.run(main())
    assert status == 200
    assert before + TTL_S - 2 <= signed["expires_at"] <= time.time() + TTL_S  # the gateway renews then
    tokens = verifier(short.address)
    tokens.jwks.refresh()  # fetched now, not in the background
    claims = tokens.claims(cookies["ms_access"].value, before)
    assert claims[0].subject == signed["player"] and claims[1] == signed["expires_at"]
    assert refused_status == 401
    assert refused["code"] == EXPIRED and "refresh it" in refused["message"]
    assert me_status == 200 and me["player"] == signed["player"]  # the session renewed by the gateway
    assert renewed["ms_access"].value and renewed["ms_access"].value != cookies["ms_access"].value
