"""The gateway's probes, its public origin and its event streams' heartbeats.

`/healthz` answers with no other service; `/readyz` answers at once from the background check (a
503 naming what is missing while identity or the engine is away, 200 once both are there, 503 again
when the engine stops), and identity's keys route answers 503 `no_keys`, not a traceback, while it
holds none. WEB_PUBLIC_URL is the origin a page's call must come from, whatever a proxy forwards, and
refused at start when it is not an origin. A quiet stream carries `: keep-alive` comments and loses
no message between them."""

from __future__ import annotations

import asyncio
import json
import socket
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from meldstream_web import health as web_health
from meldstream_web import sse
from meldstream_web.config import WebConfig, load
from meldstream_web.server import start_gateway
from rummy_identity.testing import IdentityProcess
from rummy_infra.local import free_port
from rummy_service.config import ConfigError


def _get(url: str, headers: dict[str, str] | None = None, method: str = "GET") -> tuple[int, Any, float]:
    started = time.monotonic()
    request = urllib.request.Request(
        url, headers=headers or {}, method=method, data=b"{}" if method == "POST" else None
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            status, body = reply.status, reply.read()
    except urllib.error.HTTPError as error:
        status, body = error.code, error.read()
    return status, json.loads(body), time.monotonic() - started


def _csrf_cookie(base: str) -> str:
    with urllib.request.urlopen(base + "/api/variants", timeout=10) as reply:
        cookies: list[str] = reply.headers.get_all("set-cookie") or []
    return next(c.split(";")[0] for c in cookies if c.startswith("ms_csrf="))


async def _engine_stand_in(port: int) -> grpc.aio.Server:
    """A gRPC server answering the standard health check SERVING, where the gateway dials its engine."""
    server = grpc.aio.server()
    servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    return server


def test_probes_answer_at_once_and_readiness_follows_identity_and_the_engine(
    identity: IdentityProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(web_health, "CHECK_INTERVAL_S", 0.3)

    async def scenario() -> dict[str, Any]:
        found: dict[str, Any] = {}
        nobody = f"127.0.0.1:{free_port()}"
        down = await start_gateway(
            WebConfig(address=f"127.0.0.1:{free_port()}", identity=nobody, engine=nobody, cookie_secure=False)
        )
        try:
            found["live_down"] = await asyncio.to_thread(_get, down.url + "/healthz")
            found["ready_down"] = await asyncio.to_thread(_get, down.url + "/readyz")
            found["jwks_down"] = await asyncio.to_thread(_get, down.url + "/.well-known/jwks.json")
        finally:
            await down.stop()
        engine_port = free_port()
        engine = await _engine_stand_in(engine_port)
        up = await start_gateway(
            WebConfig(
                address=f"127.0.0.1:{free_port()}",
                identity=identity.address,
                engine=f"127.0.0.1:{engine_port}",
                cookie_secure=False,
            )
        )
        try:
            found["ready_up"] = await asyncio.to_thread(_get, up.url + "/readyz")
            await engine.stop(0)
            await asyncio.sleep(1.5)  # a few checks
            found["ready_engine_gone"] = await asyncio.to_thread(_get, up.url + "/readyz")
            found["live_engine_gone"] = await asyncio.to_thread(_get, up.url + "/healthz")
        finally:
            await up.stop()
        return found

    found = asyncio.run(scenario())
    status, body, took = found["live_down"]
    assert (status, body) == (200, {"live": True}) and took < 0.5
    status, body, took = found["ready_down"]
    assert status == 503 and not body["ready"] and took < 0.5, body
    assert "identity at" in body["identity"] and "did not answer" in body["engine"], body
    status, body, took = found["jwks_down"]
    assert (status, body["code"]) == (503, "no_keys"), body
    status, body, _ = found["ready_up"]
    assert (status, body["identity"], body["engine"]) == (200, "ok", "ok"), body
    status, body, took = found["ready_engine_gone"]
    assert status == 503 and body["identity"] == "ok" and "engine" in body["engine"] and took < 0.5, body
    assert found["live_engine_gone"][0] == 200


def test_a_page_s_call_must_come_from_the_public_origin() -> None:
    async def scenario() -> dict[str, Any]:
        nobody = f"127.0.0.1:{free_port()}"
        config = WebConfig(
            address=f"127.0.0.1:{free_port()}",
            identity=nobody,
            engine=nobody,
            cookie_secure=False,
            public_url="https://play.example.org",
        )
        gateway = await start_gateway(config)
        try:
            # The first answer sets the CSRF cookie: read it as the page does.
            cookie = await asyncio.to_thread(_csrf_cookie, gateway.url)
            token = cookie.partition("=")[2]
            base = {"Cookie": cookie, "X-CSRF-Token": token, "Content-Type": "application/json"}
            calls = {
                "public": "https://play.example.org",
                "public_any_case": "https://PLAY.example.org",
                "the_request_s_own": gateway.url,
                "other": "https://evil.example",
            }
            return {
                name: await asyncio.to_thread(
                    _get, gateway.url + "/api/signout", {**base, "Origin": origin}, "POST"
                )
                for name, origin in calls.items()
            }
        finally:
            await gateway.stop()

    found = asyncio.run(scenario())
    assert found["public"][0] == 200 and found["public_any_case"][0] == 200
    assert (found["the_request_s_own"][0], found["the_request_s_own"][1]["code"]) == (403, "csrf")
    assert (found["other"][0], found["other"][1]["code"]) == (403, "csrf")


def test_the_public_url_sets_the_origin_the_cookies_and_the_provider_s_redirect() -> None:
    config = load({"WEB_PUBLIC_URL": "https://Play.Example.org/", "WEB_ADDRESS": "0.0.0.0:8080"})
    assert (config.public_origin, config.cookie_secure) == ("https://play.example.org", True)
    oidc = {"WEB_OIDC_ISSUER": "https://id.example.com", "WEB_OIDC_CLIENT_ID": "meldstream"}
    public = load({**oidc, "WEB_PUBLIC_URL": "https://play.example.org:8443", "WEB_ADDRESS": "0.0.0.0:8080"})
    assert public.oidc.redirect_uri == "https://play.example.org:8443/api/oidc/callback"
    with pytest.raises(ConfigError, match="WEB_PUBLIC_URL"):  # not the unreachable http://0.0.0.0:8080
        load({**oidc, "WEB_ADDRESS": "0.0.0.0:8080"})
    assert load({}).public_origin == ""


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("play.example.org", "not an https URL"),
        ("http://play.example.org", "https is required"),
        ("https://play.example.org/app", "an origin only"),
        ("https://play.example.org/?x=1", "an origin only"),
        ("https://play.example.org:http", "port"),
        ("https://play example.org", "not an https URL"),
    ],
)
def test_a_public_url_that_is_not_an_origin_is_refused_in_one_line(value: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says) as refused:
        load({"WEB_PUBLIC_URL": value})
    assert "WEB_PUBLIC_URL" in str(refused.value) and "\n" not in str(refused.value)


def test_secure_cookies_cannot_be_turned_off_for_an_https_public_url() -> None:
    with pytest.raises(ConfigError, match="WEB_COOKIE_SECURE"):
        load({"WEB_PUBLIC_URL": "https://play.example.org", "WEB_COOKIE_SECURE": "0"})
    assert not load({"WEB_PUBLIC_URL": "http://127.0.0.1:8080", "WEB_COOKIE_SECURE": "0"}).cookie_secure


def test_a_quiet_stream_carries_heartbeats_and_loses_no_message() -> None:
    async def source() -> AsyncIterator[str]:
        yield "data: 1\n\n"
        await asyncio.sleep(0.35)
        yield "data: 2\n\n"

    async def read() -> list[str]:
        return [item async for item in sse.with_heartbeats(source(), 0.1)]

    got = asyncio.run(read())
    assert got[0] == "data: 1\n\n" and got[-1] == "data: 2\n\n", got
    assert got[1:-1] == [sse.KEEP_ALIVE] * len(got[1:-1]) and 2 <= len(got[1:-1]) <= 4, got


def test_the_gateway_s_event_streams_send_heartbeats(
    identity: IdentityProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real game stream, its engine not answering yet (the SDK retries for seconds): comment lines
    arrive while nothing else does."""
    monkeypatch.setattr(sse, "HEARTBEAT_S", 0.2)
    token = identity.player("gw-heartbeat").token()

    async def scenario() -> bytes:
        nobody = f"127.0.0.1:{free_port()}"
        gateway = await start_gateway(
            WebConfig(
                address=f"127.0.0.1:{free_port()}",
                identity=identity.address,
                engine=nobody,
                cookie_secure=False,
            )
        )

        def read() -> bytes:
            url = gateway.url + "/api/games/g1/updates?seat=0"
            request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
            with urllib.request.urlopen(request, timeout=5) as reply:
                assert reply.headers["Content-Type"].startswith("text/event-stream")
                first: bytes = reply.read(len(sse.KEEP_ALIVE) * 3)
                return first

        try:
            return await asyncio.to_thread(read)
        finally:
            await gateway.stop()

    assert asyncio.run(scenario()) == sse.KEEP_ALIVE.encode() * 3


def _keep_alive_round_trips(address: str, count: int) -> list[float]:
    """`count` GET /healthz over one HTTP/1.1 connection, each answer read whole; seconds each."""
    host, _, port = address.rpartition(":")
    times = []
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for _ in range(count):
            started = time.monotonic()
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: bench\r\n\r\n")
            got = b""
            while b'{"live":true}' not in got:
                chunk = conn.recv(4096)
                assert chunk, got
                got += chunk
            times.append(time.monotonic() - started)
    return times


def test_a_kept_alive_connection_is_answered_without_nagle_s_delay() -> None:
    """The gateway's connections have TCP_NODELAY: with Nagle's algorithm on, each answer after a
    connection's first (head and body written apart) waited for the client's delayed ACK, 40 ms or more
    on Linux, which was most of a click's round trip at the table (benches/web.py)."""

    async def scenario() -> list[float]:
        nobody = f"127.0.0.1:{free_port()}"
        config = WebConfig(
            address=f"127.0.0.1:{free_port()}", identity=nobody, engine=nobody, cookie_secure=False
        )
        gateway = await start_gateway(config)
        try:
            return await asyncio.to_thread(_keep_alive_round_trips, config.address, 8)
        finally:
            await gateway.stop()

    times = asyncio.run(scenario())
    assert min(times[1:]) < 0.03, times  # one fast answer after the first is enough: Nagle delays them all
