"""Prometheus metrics shared by every service: the /metrics endpoint, gRPC calls by method and status
(`CallMetrics`, which also logs authorization failures), and consumer groups' progress and lag.

Every metric lives in prometheus-client's default registry, one per process, under a name that says
whose it is (`grpc_server_*` and `rummy_consumer_*` here, `rummy_engine_*`, `rummy_matchmaking_*`,
`rummy_scoring_*` in the services); `meldstream run`, which runs the three services in one process,
serves them all on one endpoint without collisions. Labels are bounded sets (methods, status codes,
refusal codes, variants, consumer names), never a game, ticket or player id.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final
from wsgiref.simple_server import WSGIServer

import grpc
import prometheus_client
from prometheus_client import Counter, Gauge

from rummy_service import logs
from rummy_service.config import ConfigError

log = logging.getLogger("rummy_service")
Context = grpc.aio.ServicerContext[Any, Any]
if TYPE_CHECKING:  # generic only in the stubs
    Handler = grpc.RpcMethodHandler[Any, Any]

CALLS: Final = Counter(
    "grpc_server_handled",
    "gRPC calls served to their end, by service, method and status code",
    ["grpc_service", "grpc_method", "grpc_code"],
)
CONSUMED: Final = Counter(
    "rummy_consumer_records", "Records a consumer group applied and committed, by consumer", ["consumer"]
)
CONSUMER_LAG: Final = Gauge(
    "rummy_consumer_lag_records",
    "Records a consumer is behind the end of the partitions it reads (measured every few seconds)",
    ["consumer"],
)
# Refusals for authorization: the interceptor logs them, whichever service and method refused.
_AUTHORIZATION: Final = frozenset({grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED})
# Request fields named in the line of an authorization failure (ids, never a token or a card).
_ID_FIELDS: Final = ("game_id", "seat", "ticket_id", "tournament_id", "player_id")


@dataclass(slots=True)
class MetricsEndpoint:
    """The HTTP server of /metrics, on its own daemon thread (a scrape never waits for the event loop)."""

    server: WSGIServer
    thread: threading.Thread
    address: str

    @property
    def url(self) -> str:
        return f"http://{self.address}/metrics"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def serve(address: str, setting: str) -> MetricsEndpoint | None:
    """Serve /metrics at `address` (HOST:PORT; port 0 picks a free one); "" serves nothing.

    `setting` names where the address came from (an environment variable or an option), for the one-line
    `ConfigError` a bad or busy address ends in.
    """
    if not address:
        return None
    host, colon, port_text = address.rpartition(":")
    if not colon or not host or not port_text.isdigit() or int(port_text) > 65535:
        raise ConfigError(f"{setting}={address!r} is not HOST:PORT with a port 0-65535")
    try:
        server, thread = prometheus_client.start_http_server(int(port_text), host.strip("[]"))
    except OSError as exc:  # in use, or a host this machine does not have
        raise ConfigError(
            f"{setting}={address!r}: cannot serve metrics there ({exc.strerror or exc})"
        ) from None
    endpoint = MetricsEndpoint(server, thread, f"{host}:{server.server_port}")
    log.info("metrics served", extra={"url": endpoint.url})
    return endpoint


class CallMetrics(grpc.aio.ServerInterceptor):
    """Counts every call when it ends (`grpc_server_handled_total`) and logs one line for each call
    refused UNAUTHENTICATED or PERMISSION_DENIED, by any service.

    Only registered methods are wrapped (an unknown method name is grpc's UNIMPLEMENTED, uncounted), so
    the labels stay a fixed set. A call costs one wrapper coroutine and one counter increment.
    """

    def __init__(self) -> None:
        self._handlers: dict[str, Handler] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Handler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Handler | None:
        handler = await continuation(handler_call_details)
        if handler is None or handler.request_streaming:
            return handler
        method = handler_call_details.method
        wrapped = self._handlers.get(method)
        if wrapped is None:
            wrapped = self._handlers[method] = _counted(method, handler)
        return wrapped


def _counted(method: str, handler: Handler) -> Handler:
    service, _, name = method.lstrip("/").rpartition("/")
    counters: dict[grpc.StatusCode, Any] = {}

    def ended(request: Any, context: Context, error: BaseException | None) -> None:
        if isinstance(error, asyncio.CancelledError | GeneratorExit):
            code = grpc.StatusCode.CANCELLED
        else:
            set_code: grpc.StatusCode | None = (
                context.code()
            )  # None until a status is set (the stubs omit it)
            code = set_code or (grpc.StatusCode.UNKNOWN if error else grpc.StatusCode.OK)
        counter = counters.get(code)
        if counter is None:
            counter = counters[code] = CALLS.labels(service, name, code.name)
        counter.inc()
        if code in _AUTHORIZATION:
            _log_refusal(name, code, request, context)

    # The stubs describe the sync server's handlers; these are the aio server's coroutines.
    if not handler.response_streaming:
        behaviour: Any = handler.unary_unary

        async def unary(request: Any, context: Context) -> Any:
            try:
                response = await behaviour(request, context)
            except BaseException as exc:
                ended(request, context, exc)
                raise
            ended(request, context, None)
            return response

        return grpc.unary_unary_rpc_method_handler(
            unary, handler.request_deserializer, handler.response_serializer
        )
    streaming: Any = handler.unary_stream
    if not inspect.isasyncgenfunction(streaming):  # writes with `context.write` (grpc health's Watch)

        async def writes(request: Any, context: Context) -> Any:
            try:
                result = await streaming(request, context)
            except BaseException as exc:
                ended(request, context, exc)
                raise
            ended(request, context, None)
            return result

        return grpc.unary_stream_rpc_method_handler(
            writes, handler.request_deserializer, handler.response_serializer
        )

    async def yields(request: Any, context: Context) -> AsyncIterator[Any]:
        try:
            async with contextlib.aclosing(streaming(request, context)) as responses:
                async for response in responses:
                    yield response
        except BaseException as exc:
            ended(request, context, exc)
            raise
        ended(request, context, None)

    return grpc.unary_stream_rpc_method_handler(
        yields, handler.request_deserializer, handler.response_serializer
    )


def _log_refusal(method: str, status: grpc.StatusCode, request: Any, context: Context) -> None:
    """`authorization failed`: the method, the refusal's code and reason, who (when authenticated),
    the ids the request names, and the peer. The refusal's text never holds the token."""
    code, colon, reason = (context.details() or "").partition(": ")
    facts: dict[str, object] = {"method": method, "status": status.name}
    facts.update({"code": code, "reason": reason} if colon else {"reason": code})
    if logs.caller.get():
        facts["player"] = logs.caller.get()
    known = getattr(request, "DESCRIPTOR", None)
    for name in _ID_FIELDS:
        if known is not None and name in known.fields_by_name:
            facts[name] = getattr(request, name)
    facts["peer"] = context.peer()
    log.warning("authorization failed", extra=facts)
