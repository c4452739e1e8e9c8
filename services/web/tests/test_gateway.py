"""The gateway's own answers, before any gRPC call: development sign-in, and requests it refuses itself
(no token, a name kept for bots, a body that is not an action). Served by uvicorn on a free port."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from typing import Any

from meldstream_web.config import WebConfig
from meldstream_web.server import start_gateway
from rummy_infra.local import free_port
from rummy_service.auth import DEV_SECRET, TokenIssuer


def _call(url: str, method: str = "GET", body: object = None, token: str = "") -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


async def _session() -> list[tuple[int, Any]]:
    # The services' addresses are never dialled by these requests.
    config = WebConfig(address=f"127.0.0.1:{free_port()}", bot_pace_ms=0)
    gateway = await start_gateway(config)
    try:
        calls = [
            (f"{gateway.url}/api/signin", "POST", {"name": "zoe"}, ""),
            (f"{gateway.url}/api/signin", "POST", {"name": "bot-ada"}, ""),
            (f"{gateway.url}/api/games", "GET", None, ""),
            (f"{gateway.url}/api/games/g1/actions", "POST", {"seat": 0, "action": {"fly": {}}}, "x"),
            (f"{gateway.url}/api/variants", "GET", None, ""),
        ]
        return [await asyncio.to_thread(_call, *call) for call in calls]
    finally:
        await gateway.stop()


def test_sign_in_and_the_requests_the_gateway_refuses_itself() -> None:
    signed, bot_name, no_token, bad_action, variants = asyncio.run(_session())
    assert signed[0] == 200 and signed[1]["player"] == "zoe"
    assert TokenIssuer(DEV_SECRET).verify(signed[1]["token"], 0).subject == "zoe"  # a real dev token
    assert bot_name[0] == 400 and "bot-" in bot_name[1]["message"]
    assert no_token[0] == 401 and "sign in" in no_token[1]["message"]
    assert bad_action[0] == 400 and bad_action[1]["message"].startswith("not an action")
    facts = variants[1]["facts"]
    assert variants[0] == 200 and "kalooki" in variants[1]["variants"]
    assert len(facts["contract"]["contracts"]) == 8 and facts["kalooki"]["players"] == [2, 5]
    assert variants[1]["short"]["contract"] == "round 1 only" and "kalooki" not in variants[1]["short"]
    openings = {v: f["opening"] for v, f in facts.items()}
    assert openings == {"kalooki": 40, "rummy40": 40, "rummy500": 0, "contract": 0}
    spread = [v for v, f in facts.items() if f["spread_pile"]]
    assert spread == ["rummy500"] and facts["kalooki"]["contracts"] == [] and facts["contract"]["buys"]
