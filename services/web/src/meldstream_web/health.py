"""The gateway's health routes, for the probes of Kubernetes, compose and `meldstream-service health`.

`/healthz` (liveness): the process answers; no I/O, so a slow identity or engine never gets a replica
restarted. `/readyz` (readiness): the replica can serve a browser: it holds identity's public keys (it
can check a session) and the engine answered its last health check. Both are answered at once from
what `Readiness` last found: the checks run in the background every `CHECK_INTERVAL_S` (the keys'
fetch, a blocking gRPC call, in a thread), never in a probe's request, so a probe never waits on the
services and identity being down costs a 503, not a traceback a probe.

Keys once held are kept (they verify sessions until they expire, and identity refreshes them in the
background), so an identity blip does not take every replica out of the Service at once; an engine
that stops answering does, after one failed check: no game can be played through this replica then.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any, Final

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from rummy_service.auth import TokenVerifier
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from meldstream_web.config import WebConfig

log = logging.getLogger("meldstream_web")

CHECK_INTERVAL_S: Final = 5.0
ENGINE_TIMEOUT_S: Final = 2.0


async def healthz(_request: Request) -> Response:
    """Liveness: this process answers HTTP."""
    return JSONResponse({"live": True}, headers={"Cache-Control": "no-store"})


class Readiness:
    """What the last background check found: identity's keys held, the engine serving."""

    def __init__(self, config: WebConfig, tokens: TokenVerifier, interval_s: float | None = None) -> None:
        self._config = config
        self._tokens = tokens
        self._interval = CHECK_INTERVAL_S if interval_s is None else interval_s
        self.identity = "not checked yet"  # "ok", or why not
        self.engine = "not checked yet"
        self.checked_at = 0.0
        self._task: asyncio.Task[None] | None = None
        self._channel: grpc.aio.Channel | None = None

    @property
    def ready(self) -> bool:
        return self.identity == "ok" and self.engine == "ok"

    async def start(self) -> None:
        """The first check, then one every interval in the background."""
        self._channel = self._config.tls.channel(self._config.engine)
        await self.check()
        self._task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._channel is not None:
            await self._channel.close()

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            try:
                await self.check()
            except Exception as exc:  # a check that fails to run is a failed check, never the end of them
                self.identity = self.engine = f"the check failed: {type(exc).__name__}"

    async def check(self) -> None:
        identity, engine = await asyncio.gather(self._identity(), self._engine())
        for name, was, now in (("identity", self.identity, identity), ("engine", self.engine, engine)):
            if now not in (was, "ok"):
                log.warning("not ready: %s: %s", name, now)
        self.identity, self.engine, self.checked_at = identity, engine, time.time()

    async def _identity(self) -> str:
        jwks = self._tokens.jwks
        if jwks.loaded:
            return "ok"
        try:
            await asyncio.to_thread(jwks.refresh)
        except Exception as exc:  # ConnectionError from the fetch: one line, no traceback
            return str(exc) or type(exc).__name__
        return "ok"

    async def _engine(self) -> str:
        assert self._channel is not None
        stub: Any = health_pb2_grpc.HealthStub(self._channel)
        try:
            reply = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=ENGINE_TIMEOUT_S)
        except grpc.aio.AioRpcError as error:
            return f"the engine at {self._config.engine} did not answer ({error.code().name})"
        if reply.status != health_pb2.HealthCheckResponse.SERVING:
            status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
            return f"the engine at {self._config.engine} is {status}"
        return "ok"

    async def readyz(self, _request: Request) -> Response:
        """Readiness, from the last check: 200 when ready, 503 with what is missing otherwise."""
        body = {
            "ready": self.ready,
            "identity": self.identity,
            "engine": self.engine,
            "checked_at": round(self.checked_at, 3),
        }
        return JSONResponse(body, 200 if self.ready else 503, headers={"Cache-Control": "no-store"})
