"""grpc.aio server bootstrap: the service, gRPC health (driven by a readiness probe) and reflection."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

Probe = Callable[[], Awaitable[bool]]


class ServiceHost:
    """One aio server with health and reflection; health is SERVING only while `probe` says ready.

    Every name in `services` (full service names) and the empty name "" share one status, as
    Kubernetes `grpc:` probes and grpcurl's `grpc.health.v1.Health/Check` expect.
    """

    def __init__(
        self, address: str, services: Sequence[str], probe: Probe, probe_interval_s: float = 2.0
    ) -> None:
        self.server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
        self._health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, self.server)
        names = (*services, health.SERVICE_NAME, reflection.SERVICE_NAME)
        reflection.enable_server_reflection(names, self.server)
        self._services = ("", *services)
        self._probe = probe
        self._interval = probe_interval_s
        self._task: asyncio.Task[None] | None = None
        self.port = self.server.add_insecure_port(address)
        if self.port == 0:
            raise OSError(f"cannot listen on {address}")
        self.address = f"{address.rsplit(':', 1)[0]}:{self.port}"
        """Where it listens: the configured host and the bound port (resolved when asked for port 0)."""

    async def start(self) -> None:
        await self._check_once()
        await self.server.start()
        self._task = asyncio.create_task(self._watch())

    async def _check_once(self) -> None:
        try:
            ready = await self._probe()
        except Exception:
            ready = False
        status = (
            health_pb2.HealthCheckResponse.SERVING if ready else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        for name in self._services:
            await self._health.set(name, status)

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            await self._check_once()

    async def stop(self, grace_s: float = 1.0) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self._health.enter_graceful_shutdown()
        await self.server.stop(grace_s)
