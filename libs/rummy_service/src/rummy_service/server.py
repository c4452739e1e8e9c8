"""grpc.aio server bootstrap: the service, gRPC health (driven by a readiness probe) and reflection."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import inspect
import logging
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from rummy_service.config import ConfigError
from rummy_service.errors import InvalidArgument, abort
from rummy_service.metrics import CallMetrics
from rummy_service.rate_limits import RateLimiting
from rummy_service.tls import PLAINTEXT, Tls

log = logging.getLogger("rummy_service")
Probe = Callable[[], Awaitable[bool]]
Context = grpc.aio.ServicerContext[Any, Any]
if TYPE_CHECKING:  # generic only in the stubs
    Handler = grpc.RpcMethodHandler[Any, Any]


@dataclass(frozen=True, slots=True)
class _Malformed:
    """What a request's bytes parse to when they are not a request: why, for the refusal."""

    reason: str


class _MalformedRequests(grpc.aio.ServerInterceptor):
    """Request bytes that do not parse: INVALID_ARGUMENT `malformed_request` and one log line.

    Left to grpc, the parser's exception escapes the deserializer: every such call answers UNKNOWN
    and logs a full traceback. Here the deserializer returns `_Malformed` instead and the method
    refuses it before the servicer runs. Only methods taking one request are wrapped (every method
    of ours); a request stream (reflection) keeps grpc's own handling.
    """

    def __init__(self) -> None:
        self._handlers: dict[str, Handler] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Handler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Handler | None:
        handler = await continuation(handler_call_details)
        if handler is None or handler.request_streaming or handler.request_deserializer is None:
            return handler
        method = handler_call_details.method
        wrapped = self._handlers.get(method)
        if wrapped is None:
            wrapped = self._handlers[method] = _guarded(method, handler)
        return wrapped


def _guarded(method: str, handler: Handler) -> Handler:
    # The stubs describe the sync server's handlers; these are the aio server's coroutines.
    parse: Any = handler.request_deserializer

    def deserialize(data: bytes) -> Any:
        try:
            return parse(data)
        except Exception as exc:  # the protobuf parser's DecodeError, or anything else it raises
            return _Malformed(str(exc).partition("\n")[0] or type(exc).__name__)

    async def refuse(request: _Malformed, context: Context) -> None:
        log.warning("%s: malformed request refused: %s", method, request.reason)
        await abort(context, InvalidArgument("malformed_request", request.reason))

    if not handler.response_streaming:
        behaviour: Any = handler.unary_unary

        async def unary(request: Any, context: Context) -> Any:
            if isinstance(request, _Malformed):
                await refuse(request, context)
            return await behaviour(request, context)

        return grpc.unary_unary_rpc_method_handler(unary, deserialize, handler.response_serializer)
    streaming: Any = handler.unary_stream
    if not inspect.isasyncgenfunction(streaming):  # writes with `context.write` (grpc health's Watch)

        async def writes(request: Any, context: Context) -> Any:
            if isinstance(request, _Malformed):
                await refuse(request, context)
            return await streaming(request, context)

        return grpc.unary_stream_rpc_method_handler(writes, deserialize, handler.response_serializer)

    async def yields(request: Any, context: Context) -> AsyncIterator[Any]:
        if isinstance(request, _Malformed):
            await refuse(request, context)
        async with contextlib.aclosing(streaming(request, context)) as responses:
            async for response in responses:
                yield response

    return grpc.unary_stream_rpc_method_handler(yields, deserialize, handler.response_serializer)


def check_listen(address: str) -> None:
    """`ConfigError` saying why nothing can listen on `address`: not HOST:PORT, a host that does not
    resolve or that this machine does not have, or a port in use. Asked of the system first because
    gRPC answers each of these with one log line of its own and a port of 0, or listens elsewhere (a
    port above 65535 wraps around, a missing port is 443)."""
    host, colon, port = address.rpartition(":")
    if not colon or not host or not port.isdigit() or int(port) > 65535:
        raise ConfigError(f"cannot listen on {address!r}: not HOST:PORT with a port 0-65535")
    try:
        found = socket.getaddrinfo(host.strip("[]"), int(port), type=socket.SOCK_STREAM)
    except socket.gaierror:
        raise ConfigError(f"cannot listen on {address!r}: host {host!r} does not resolve") from None
    for family, kind, proto, _, where in found:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(where)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    raise ConfigError(
                        f"cannot listen on {address!r}: port {port} is in use (another meldstream, or "
                        "another program): stop it or choose another port"
                    ) from None
                if exc.errno == errno.EADDRNOTAVAIL:
                    raise ConfigError(
                        f"cannot listen on {address!r}: this machine has no address {host} (0.0.0.0 "
                        "listens on every address)"
                    ) from None
                if exc.errno == errno.EACCES:
                    raise ConfigError(
                        f"cannot listen on {address!r}: port {port} needs privileges (use one above 1023)"
                    ) from None
                raise ConfigError(f"cannot listen on {address!r}: {exc.strerror or exc}") from None


PENDING_CALLS: Final = 100_000
"""Calls arrived but not yet taken by the server's loop, beyond which gRPC core ends them CANCELLED.

Core's default (`grpc.server.max_pending_requests`, 1,000) cancelled calls of a burst, such as 2,000
spectators opening streams at once, before the service saw them; the services' own limits (rates,
spectators) answer instead, with a reason and a retry delay."""
SERVER_OPTIONS: Final = (
    ("grpc.so_reuseport", 0),
    ("grpc.server.max_pending_requests", PENDING_CALLS),
    ("grpc.server.max_pending_requests_hard_limit", PENDING_CALLS),
)


class ServiceHost:
    """One aio server with health and reflection; health is SERVING only while `probe` says ready.

    Every name in `services` (full service names) and the empty name "" share one status, as
    Kubernetes `grpc:` probes and grpcurl's `grpc.health.v1.Health/Check` expect.
    """

    def __init__(
        self,
        address: str,
        services: Sequence[str],
        probe: Probe,
        probe_interval_s: float = 2.0,
        tls: Tls = PLAINTEXT,
        *,
        limits: RateLimiting | None = None,
    ) -> None:
        # Outermost first: every call is counted, a malformed one refused before it is rate-limited.
        interceptors: list[grpc.aio.ServerInterceptor] = [CallMetrics(), _MalformedRequests()]
        self._limits = limits
        if limits is not None:  # `rate_limits.RateLimiting`
            interceptors.append(limits)
        self.server = grpc.aio.server(interceptors=interceptors, options=SERVER_OPTIONS)
        self._health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, self.server)
        names = (*services, health.SERVICE_NAME, reflection.SERVICE_NAME)
        reflection.enable_server_reflection(names, self.server)
        self._services = ("", *services)
        self._probe = probe
        self._interval = probe_interval_s
        self._task: asyncio.Task[None] | None = None
        check_listen(address)
        credentials = tls.server_credentials()
        try:
            if credentials is None:
                self.port = self.server.add_insecure_port(address)
            else:
                self.port = self.server.add_secure_port(address, credentials)
        except RuntimeError:  # grpc's answer to an address it cannot parse or resolve
            self.port = 0
        if self.port == 0:  # one line for the operator (`run_service`), not a traceback
            raise ConfigError(f"cannot listen on {address!r}: give a free HOST:PORT this machine has")
        self.tls = tls.serves
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
        if self._limits is not None:
            await self._limits.close()
