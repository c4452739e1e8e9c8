"""Every answer of the gateway carries its security headers: the page, its scripts, the API, a refusal
and a path it does not know (the browser obeys the policy: tests/browser/test_hostile_names.py)."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request

from meldstream_web.config import WebConfig
from meldstream_web.headers import HEADERS
from meldstream_web.server import start_gateway
from rummy_infra.local import free_port


def _headers(url: str) -> tuple[int, dict[str, str]]:
    try:
        with urllib.request.urlopen(url, timeout=10) as reply:
            return reply.status, {name.lower(): value for name, value in reply.headers.items()}
    except urllib.error.HTTPError as error:
        return error.code, {name.lower(): value for name, value in error.headers.items()}


async def _answers() -> dict[str, tuple[int, dict[str, str]]]:
    config = WebConfig(address=f"127.0.0.1:{free_port()}", bot_pace_ms=0)  # no service is dialled
    gateway = await start_gateway(config)
    paths = ("/", "/static/app.js", "/api/variants", "/api/games/g1/updates", "/nowhere")
    try:
        return {path: await asyncio.to_thread(_headers, gateway.url + path) for path in paths}
    finally:
        await gateway.stop()


def test_every_answer_carries_the_policy_and_the_frame_rule() -> None:
    answers = asyncio.run(_answers())
    assert [status for status, _ in answers.values()] == [200, 200, 200, 401, 404]
    for path, (_, headers) in answers.items():
        assert {name: headers.get(name.lower()) for name in HEADERS} == HEADERS, path
    policy = dict(rule.split(" ", 1) for rule in HEADERS["Content-Security-Policy"].split("; "))
    assert policy["script-src"] == "'self'" and policy["frame-ancestors"] == "'none'"
    assert "unsafe" not in HEADERS["Content-Security-Policy"]
