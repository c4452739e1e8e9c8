"""Mapping refusals to gRPC status codes, in one place so every service answers alike."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Final, NoReturn, TypeVar

import grpc

QUOTED_CHARS: Final = 40


def quote(value: str) -> str:
    """`value` as a refusal message may show it: the repr of its first 40 characters, "…" after a cut.

    Messages go back in a status trailer and into logs; what a client sent is never echoed in full.
    """
    return repr(value) if len(value) <= QUOTED_CHARS else repr(value[:QUOTED_CHARS]) + "…"


class ServiceError(Exception):
    """A refusal with the gRPC status it maps to; `code` is a stable machine-readable reason."""

    status: grpc.StatusCode = grpc.StatusCode.INTERNAL

    def __init__(self, code: str, message: str, trailers: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.trailers = trailers  # trailing metadata a client acts on (e.g. where the game's owner is)


class InvalidArgument(ServiceError):
    status = grpc.StatusCode.INVALID_ARGUMENT


class NotFound(ServiceError):
    status = grpc.StatusCode.NOT_FOUND


class AlreadyExists(ServiceError):
    status = grpc.StatusCode.ALREADY_EXISTS


class PermissionDenied(ServiceError):
    status = grpc.StatusCode.PERMISSION_DENIED


class Unauthenticated(ServiceError):
    status = grpc.StatusCode.UNAUTHENTICATED


class FailedPrecondition(ServiceError):
    """A move the rules refuse; `rule` cites the spec passage."""

    status = grpc.StatusCode.FAILED_PRECONDITION


class Unavailable(ServiceError):
    status = grpc.StatusCode.UNAVAILABLE


class ResourceExhausted(ServiceError):
    """A limit of the service, not of the request: retry later (a delay in the trailers when one helps)."""

    status = grpc.StatusCode.RESOURCE_EXHAUSTED


async def abort(context: grpc.aio.ServicerContext[object, object], error: ServiceError) -> NoReturn:
    """End the call with the error's status; the message starts with the code so clients can switch on it."""
    await context.abort(error.status, str(error), error.trailers)
    raise AssertionError("context.abort returned")  # pragma: no cover - abort always raises


S = TypeVar("S")
Req = TypeVar("Req")
Resp = TypeVar("Resp")
Context = grpc.aio.ServicerContext[Any, Any]


def unary_errors(
    method: Callable[[S, Req, Context], Awaitable[Resp]],
) -> Callable[[S, Req, Context], Awaitable[Resp]]:
    """A unary servicer method whose `ServiceError`s end the call with their status (`abort`)."""

    @functools.wraps(method)
    async def call(self: S, request: Req, context: Context) -> Resp:
        try:
            return await method(self, request, context)
        except ServiceError as exc:
            await abort(context, exc)

    return call


def stream_errors(
    method: Callable[[S, Req, Context], AsyncIterator[Resp]],
) -> Callable[[S, Req, Context], AsyncIterator[Resp]]:
    """A server-streaming servicer method whose `ServiceError`s end the stream with their status."""

    @functools.wraps(method)
    async def call(self: S, request: Req, context: Context) -> AsyncIterator[Resp]:
        try:
            async for message in method(self, request, context):
                yield message
        except ServiceError as exc:
            await abort(context, exc)

    return call
