"""Calls that reach an instance not owning their partition are forwarded, server-side, to the owner.

Why forward rather than redirect (the engine refuses with the owner's address and its SDK follows):
matchmaking's and identity's APIs are called by third-party clients in any language with plain gRPC
stubs; forwarding keeps every instance answering every call, so they need no routing logic and one
address (a Kubernetes Service) is enough. The cost is one extra hop for calls that land on a
non-owner.

The owner is found through the `OwnerDirectory` (partition -> address, re-read every few seconds). A
forwarded call carries `meldstream-forwarded`, and an instance never forwards such a call again: it
answers UNAVAILABLE `not_owner` and the forwarding instance looks the owner up again. While a
partition moves (no owner known, the old one killed, the new one still folding) calls wait, retrying
with backoff, for up to `ROUTE_WAIT_S`, then answer UNAVAILABLE.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

import grpc

from rummy_service.errors import ServiceError, Unavailable
from rummy_service.tls import PLAINTEXT, Tls

NOT_OWNER: Final = "not_owner"
FORWARDED: Final = "meldstream-forwarded"  # request metadata of a forwarded call
ROUTE_WAIT_S: Final = 30.0  # how long a call waits for its partition's owner
CALL_TIMEOUT_S: Final = 10.0
Context = grpc.aio.ServicerContext[Any, Any]
Resp = TypeVar("Resp")
Owners = Callable[[int], str | None]


class Relayed(ServiceError):
    """The owner's refusal, passed on as it was."""

    def __init__(self, error: grpc.aio.AioRpcError) -> None:
        code, _, message = (error.details() or "").partition(": ")
        super().__init__(code, message)
        self.status = error.code()


def metadata(context: Context, name: str) -> str:
    return next((str(v) for k, v in context.invocation_metadata() or () if k == name), "")


def forwarded(context: Context) -> bool:
    return bool(metadata(context, FORWARDED))


class PartitionRouter:
    """Runs a call here when this instance serves its partition, else at the partition's owner.

    `owned` says which partitions this instance serves now, `owners` where another partition is
    served, `stub` makes the service's stub on a channel to a peer.
    """

    def __init__(
        self,
        owned: Callable[[], set[int]],
        owners: Owners,
        stub: Callable[[grpc.aio.Channel], Any],
        *,
        wait_s: float = ROUTE_WAIT_S,
        tls: Tls = PLAINTEXT,
    ) -> None:
        self._owned = owned
        self._owners = owners
        self._make_stub = stub
        self._wait_s = wait_s
        self._tls = tls  # peers are called as clients are: over TLS when TLS_CA_FILE is set
        self._channels: dict[str, grpc.aio.Channel] = {}

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()

    def serves(self, partition: int) -> bool:
        return partition in self._owned()

    def stub(self, address: str) -> Any:
        channel = self._channels.get(address)
        if channel is None:
            channel = self._channels[address] = self._tls.channel(address)
        return self._make_stub(channel)

    def forwarded_metadata(self, context: Context, extra: tuple[tuple[str, str], ...]) -> list[Any]:
        passed = [(k, v) for k, v in context.invocation_metadata() or () if k == "authorization"]
        return [*passed, (FORWARDED, "1"), *extra]

    def deadline(self, context: Context) -> float:
        remaining = context.time_remaining()
        wait = self._wait_s if remaining is None else min(self._wait_s, max(0.0, remaining - 0.5))
        return asyncio.get_running_loop().time() + wait

    def owner(self, partition: int, context: Context) -> str | None:
        """The address to forward to, None to wait; `not_owner` for a call that was forwarded here."""
        if forwarded(context):
            raise Unavailable(NOT_OWNER, f"partition {partition} is not served by this instance")
        return self._owners(partition)

    async def unary(
        self,
        partition: int,
        method: str,
        request: Any,
        context: Context,
        local: Callable[[], Awaitable[Resp]],
        *,
        extra: tuple[tuple[str, str], ...] = (),
    ) -> Resp:
        loop = asyncio.get_running_loop()
        deadline = self.deadline(context)
        delay = 0.05
        while True:
            try:
                if self.serves(partition):
                    return await local()
                owner = self.owner(partition, context)
                if owner is not None:
                    call = getattr(self.stub(owner), method)
                    answer: Resp = await call(
                        request, metadata=self.forwarded_metadata(context, extra), timeout=CALL_TIMEOUT_S
                    )
                    return answer
                failure: ServiceError = Unavailable(NOT_OWNER, f"partition {partition} is moving: retry")
            except Unavailable as exc:
                if exc.code != NOT_OWNER or forwarded(context):
                    raise
                failure = exc
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.UNAVAILABLE:
                    raise Relayed(error) from None
                failure = Relayed(error)  # the owner is away or refused as not_owner: look again
            if loop.time() + delay > deadline:
                raise failure
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.5)
