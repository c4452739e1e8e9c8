"""A rate limit's refusal as every client reads it: RESOURCE_EXHAUSTED with the delay it asks for."""

from __future__ import annotations

from typing import Final, Protocol

import grpc

RETRY_AFTER_TRAILER: Final = "retry-after-ms"  # a rate limit's delay (rummy_service.rate_limits)


class _Refusal(Protocol):
    """What a sync `grpc.RpcError` and a `grpc.aio.AioRpcError` both answer."""

    def code(self) -> grpc.StatusCode: ...

    def trailing_metadata(self) -> object: ...


def retry_after(error: _Refusal) -> float | None:
    """The delay a RESOURCE_EXHAUSTED refusal asks for (`retry-after-ms`), in seconds; else None."""
    if error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
        return None
    for key, value in error.trailing_metadata() or ():  # type: ignore[attr-defined]
        if key == RETRY_AFTER_TRAILER and str(value).isdigit():
            return int(str(value)) / 1000
    return None
