"""The service host: health follows the readiness probe; reflection lists the services."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
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
