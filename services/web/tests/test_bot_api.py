"""The bot API's own answers, before any game call: its OpenAPI document against the app's real routes,
CORS for the operator's listed origins only, its refusals in the gateway's one JSON shape (a bounded
field, a body too large, no token, a token identity refuses), and 429 with Retry-After over the
gateway's limit. Served by uvicorn on a free port with the real identity; the engine is never dialled
(tests/browser/test_http_bot.py plays whole games through it)."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from meldstream_web import ndjson
from meldstream_web.app import create_app
from meldstream_web.config import WebConfig, cors_origins_setting
from meldstream_web.openapi import DOCUMENT
from meldstream_web.server import start_gateway
from rummy_identity.testing import IdentityProcess
from rummy_infra.local import free_port
from rummy_service.config import ConfigError
from rummy_service.rate_limits import LimitSettings
from starlette.routing import Route

BOTS = "https://bots.example"
METHODS = ("get", "post", "put", "patch", "delete")


def _refs(node: object) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def test_the_openapi_document_names_exactly_the_api_s_routes() -> None:
    app = create_app(WebConfig())
    served = {
        (route.path, method.lower())
        for route in app.routes
        if isinstance(route, Route)
        and (route.path.startswith("/api/v1/") or route.path == "/api/openapi.json")
        for method in route.methods or ()
        if method != "HEAD"
    }
    documented = {
        (path, method) for path, item in DOCUMENT["paths"].items() for method in item if method in METHODS
    }
    assert documented == served
    assert DOCUMENT["openapi"].startswith("3.1.")
    for path, item in DOCUMENT["paths"].items():
        for parameter in (p for op in item.values() for p in op.get("parameters", []) if p["in"] == "path"):
            assert "{" + parameter["name"] + "}" in path
    refs = set(_refs(DOCUMENT))
    assert refs, DOCUMENT
    for ref in refs:  # each names a component the document has
        _, components, kind, name = ref.split("/")
        assert DOCUMENT[components][kind][name], ref


def _call(
    base: str, path: str, method: str = "GET", body: object = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], Any]:
    """An answer's status, headers (lowercase names) and body (JSON, or its text)."""
    data = body if isinstance(body, bytes) else None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            status, got, raw = reply.status, reply.headers, reply.read()
    except urllib.error.HTTPError as error:
        status, got, raw = error.code, error.headers, error.read()
    try:
        answer = json.loads(raw)
    except ValueError:
        answer = raw.decode()
    return status, {k.lower(): v for k, v in got.items()}, answer


async def _answers(identity: IdentityProcess) -> dict[str, tuple[int, dict[str, str], Any]]:
    config = WebConfig(
        address=f"127.0.0.1:{free_port()}",
        identity=identity.address,
        cookie_secure=False,
        cors_origins=(BOTS,),
        limits=LimitSettings(address="12/minute"),
    )
    gateway = await start_gateway(config)
    preflight = {"Origin": BOTS, "Access-Control-Request-Method": "POST"}
    steps: dict[str, tuple[str, str, object, dict[str, str]]] = {
        "document": ("/api/openapi.json", "GET", None, {"Origin": BOTS}),
        "v1_document": ("/api/v1/openapi.json", "GET", None, {}),
        "preflight": ("/api/v1/seek", "OPTIONS", None, preflight),
        "preflight_other_site": (
            "/api/v1/seek",
            "OPTIONS",
            None,
            {**preflight, "Origin": "https://evil.example"},
        ),
        "app_route": ("/api/variants", "GET", None, {"Origin": BOTS}),  # the web app's: same-origin only
        "long_token": ("/api/v1/token", "POST", {"api_token": "x" * 513}, {}),
        "huge_body": ("/api/v1/token", "POST", b"{" + b" " * 5000 + b"}", {}),
        "refused_token": ("/api/v1/token", "POST", {"api_token": "mst_not-a-token"}, {}),
        "no_token": ("/api/v1/account", "GET", None, {}),
        "bad_token": ("/api/v1/stream/event", "GET", None, {"Authorization": "Bearer nonsense"}),
    }
    try:
        answers = {
            name: await asyncio.to_thread(_call, gateway.url, path, method, body, headers)
            for name, (path, method, body, headers) in steps.items()
        }
        for _ in range(12):  # past the address's 12 a minute
            answers["limited"] = await asyncio.to_thread(
                _call, gateway.url, "/api/v1/variants", "GET", None, {"Origin": BOTS}
            )
            if answers["limited"][0] == 429:
                break
        return answers
    finally:
        await gateway.stop()


def test_cors_refusals_and_limits(identity: IdentityProcess) -> None:
    a = asyncio.run(_answers(identity))
    assert a["document"][0] == 200 and a["document"][2] == a["v1_document"][2] == DOCUMENT
    assert a["document"][1]["access-control-allow-origin"] == BOTS
    assert "access-control-allow-credentials" not in a["document"][1]  # never with a person's cookies
    status, headers, _ = a["preflight"]
    assert status == 200 and headers["access-control-allow-origin"] == BOTS
    assert "Authorization" in headers["access-control-allow-headers"]
    assert a["preflight_other_site"][0] == 400
    assert "access-control-allow-origin" not in a["preflight_other_site"][1]
    assert "access-control-allow-origin" not in a["app_route"][1]

    def refusal(name: str) -> tuple[int, str, str]:
        status, _, body = a[name]
        assert set(body) == {"status", "code", "message"}, body
        return status, body["status"], body["code"]

    assert refusal("long_token") == (400, "BAD_REQUEST", "too_long")
    assert "x" * 20 not in a["long_token"][2]["message"]  # named, never echoed
    assert refusal("huge_body") == (413, "BAD_REQUEST", "too_large")
    assert refusal("refused_token")[:2] == (401, "UNAUTHENTICATED")
    assert refusal("no_token") == (401, "UNAUTHENTICATED", "unauthenticated")
    assert refusal("bad_token") == (401, "UNAUTHENTICATED", "unauthenticated")

    status, headers, _ = a["limited"]
    assert refusal("limited") == (429, "RESOURCE_EXHAUSTED", "rate_limited")
    assert int(headers["retry-after"]) >= 1
    assert headers["access-control-allow-origin"] == BOTS  # a browser client can read it
    assert "Retry-After" in headers["access-control-expose-headers"]


async def _streamed(heartbeat_s: float) -> list[str]:
    async def items() -> AsyncIterator[dict[str, Any]]:
        yield {"type": "gameStart"}
        await asyncio.sleep(heartbeat_s * 5)
        yield {"type": "gameFinish"}

    response = ndjson.stream(items(), heartbeat_s)
    return [str(chunk) async for chunk in response.body_iterator]  # ndjson yields text


def test_an_ndjson_stream_is_one_object_a_line_with_empty_lines_while_quiet() -> None:
    chunks = asyncio.run(_streamed(0.02))
    assert chunks[0] == '{"type":"gameStart"}\n' and chunks[-1] == '{"type":"gameFinish"}\n'
    assert set(chunks[1:-1]) == {"\n"} and len(chunks) >= 3, chunks


def test_cors_origins_are_origins_only() -> None:
    setting = "https://Bots.Example:443, http://127.0.0.1:5173 ,"
    assert cors_origins_setting({"WEB_CORS_ORIGINS": setting}) == (
        "https://bots.example",
        "http://127.0.0.1:5173",
    )
    assert cors_origins_setting({"WEB_CORS_ORIGINS": "*"}) == ("*",)
    assert cors_origins_setting({}) == ()
    for wrong in (
        "bots.example",
        "https://bots.example/app",
        "ftp://bots.example",
        "https://x:port",
        "https://a@b",
    ):
        with pytest.raises(ConfigError, match="WEB_CORS_ORIGINS") as refused:
            cors_origins_setting({"WEB_CORS_ORIGINS": wrong + "x" * 200})
        assert "x" * 100 not in str(refused.value)  # quoted, cut short
