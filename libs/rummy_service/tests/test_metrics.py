"""/metrics over HTTP, each call counted by method and status, an authorization failure logged once."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import urllib.request
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families
from rummy_service import logs, metrics
from rummy_service.config import ConfigError
from rummy_service.errors import PermissionDenied, abort
from rummy_service.server import ServiceHost

Context = grpc.aio.ServicerContext[Any, Any]


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample at `url`: (name, sorted labels) -> value."""
    with urllib.request.urlopen(url, timeout=10) as reply:
        text = reply.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def calls(samples: dict[Any, float], method: str, code: str) -> float:
    labels = (("grpc_code", code), ("grpc_method", method), ("grpc_service", "demo.v1.Demo"))
    return samples.get(("grpc_server_handled_total", labels), 0.0)


async def _act(request: health_pb2.HealthCheckRequest, context: Context) -> health_pb2.HealthCheckResponse:
    """A demo method: `deny` refuses an authenticated caller, `fail` breaks, anything else answers."""
    if request.service == "deny":
        logs.caller.set("bob")
        await abort(context, PermissionDenied("not_your_seat", "seat 1 is not yours"))
    if request.service == "fail":
        raise RuntimeError("a bug")
    return health_pb2.HealthCheckResponse()


def test_calls_are_counted_by_method_and_status_and_a_refusal_for_authorization_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    endpoint = metrics.serve("127.0.0.1:0", "TEST_METRICS_ADDRESS")
    assert endpoint is not None

    async def scenario() -> None:
        async def ready() -> bool:
            return True

        host = ServiceHost("127.0.0.1:0", ["demo.v1.Demo"], ready)
        method = grpc.unary_unary_rpc_method_handler(
            _act, health_pb2.HealthCheckRequest.FromString, health_pb2.HealthCheckResponse.SerializeToString
        )
        host.server.add_generic_rpc_handlers(
            [grpc.method_handlers_generic_handler("demo.v1.Demo", {"Act": method})]
        )
        await host.start()
        try:
            async with grpc.aio.insecure_channel(host.address) as channel:
                act = channel.unary_unary(
                    "/demo.v1.Demo/Act",
                    request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
                    response_deserializer=health_pb2.HealthCheckResponse.FromString,
                )
                for service in ("ok", "ok", "deny", "fail"):
                    with caplog.at_level(logging.INFO), contextlib.suppress(grpc.aio.AioRpcError):
                        await act(health_pb2.HealthCheckRequest(service=service))
                health: Any = health_pb2_grpc.HealthStub(channel)
                await health.Check(health_pb2.HealthCheckRequest())
        finally:
            await host.stop()

    before = scrape(endpoint.url)
    try:
        asyncio.run(scenario())
        after = scrape(endpoint.url)
    finally:
        endpoint.close()
    for code, count in (("OK", 2), ("PERMISSION_DENIED", 1), ("UNKNOWN", 1)):
        assert calls(after, "Act", code) - calls(before, "Act", code) == count
    health = (("grpc_code", "OK"), ("grpc_method", "Check"), ("grpc_service", "grpc.health.v1.Health"))
    assert after[("grpc_server_handled_total", health)] >= 1
    refused = [r for r in caplog.records if r.getMessage() == "authorization failed"]
    assert len(refused) == 1
    facts = logs.fields(refused[0])
    assert facts["method"] == "Act" and facts["status"] == "PERMISSION_DENIED" and facts["player"] == "bob"
    assert facts["code"] == "not_your_seat" and facts["reason"] == "seat 1 is not yours"
    assert str(facts["peer"]).startswith("ipv4:127.0.0.1:")


def test_a_bad_or_busy_metrics_address_is_one_line_naming_the_setting() -> None:
    assert metrics.serve("", "ENGINE_METRICS_ADDRESS") is None
    for bad in ("9100", "127.0.0.1:99999", "127.0.0.1:http"):
        with pytest.raises(ConfigError, match=rf"^ENGINE_METRICS_ADDRESS='{bad}' is not HOST:PORT"):
            metrics.serve(bad, "ENGINE_METRICS_ADDRESS")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        address = f"127.0.0.1:{busy.getsockname()[1]}"
        with pytest.raises(ConfigError, match=rf"^--metrics='{address}': cannot serve metrics there \(.+\)$"):
            metrics.serve(address, "--metrics")
