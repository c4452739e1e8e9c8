"""The service host: health follows the readiness probe; reflection lists the services."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from rummy_service.server import ServiceHost

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def test_health_is_serving_only_while_the_probe_answers() -> None:
    async def scenario() -> None:
        ready: dict[str, bool | None] = {"now": True}

        async def probe() -> bool:
            if ready["now"] is None:
                raise ConnectionError("store down")
            return bool(ready["now"])

        host = ServiceHost("127.0.0.1:0", ["demo.v1.Demo"], probe, probe_interval_s=0.02)
        await host.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{host.port}") as channel:
                health: Any = health_pb2_grpc.HealthStub(channel)

                async def status(service: str) -> int:
                    reply = await health.Check(health_pb2.HealthCheckRequest(service=service))
                    return int(reply.status)

                assert await status("") == SERVING and await status("demo.v1.Demo") == SERVING
                for value in (False, None):  # refusing, then raising
                    ready["now"] = value
                    await asyncio.sleep(0.1)
                    assert await status("demo.v1.Demo") == NOT_SERVING
                ready["now"] = True
                await asyncio.sleep(0.1)
                assert await status("") == SERVING
        finally:
            await host.stop()

    asyncio.run(scenario())


def test_unparseable_request_bytes_are_invalid_argument_with_one_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """grpc's own handling answers UNKNOWN and logs the parser's traceback for every such call."""

    async def scenario() -> None:
        async def probe() -> bool:
            return True

        host = ServiceHost("127.0.0.1:0", [], probe)
        await host.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{host.port}") as channel:
                garbage = b"\xff\xff\xff\xff"
                check: Any = channel.unary_unary("/grpc.health.v1.Health/Check")
                watch: Any = channel.unary_stream("/grpc.health.v1.Health/Watch")  # a unary-stream method
                for call in (check(garbage), watch(garbage).read()):
                    with pytest.raises(grpc.aio.AioRpcError) as refused:
                        await call
                    assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
                    assert (refused.value.details() or "").startswith("malformed_request: ")
                health: Any = health_pb2_grpc.HealthStub(channel)  # well-formed calls are untouched
                reply = await health.Check(health_pb2.HealthCheckRequest(service=""))
                assert reply.status == SERVING
        finally:
            await host.stop()

    with caplog.at_level(logging.INFO):
        asyncio.run(scenario())
    refusals = [r for r in caplog.records if "malformed" in r.getMessage() or r.exc_info]
    assert len(refusals) == 2 and not any(r.exc_info for r in caplog.records)
    assert all("\n" not in r.getMessage() for r in refusals)
