"""Calls that reach an instance not owning their partition are forwarded, server-side, to the owner.

Why forward rather than redirect (the engine refuses with the owner's address and its SDK follows):
matchmaking's API is small and called by third-party clients in any language with plain gRPC stubs;
forwarding keeps every instance answering every call, so they need no routing logic and one address
(a Kubernetes Service) is enough. A ticket's watch survives its queue moving: the instance holding
the stream re-opens it at the new owner and sends on only what changed. The cost is one extra hop
for calls that land on a non-owner, a small price next to pairing waits measured in seconds.

The owner is found through the `OwnerDirectory` (partition -> address, re-read every few seconds). A
forwarded call carries `meldstream-forwarded`, and an instance never forwards such a call again: it
answers UNAVAILABLE `not_owner` and the forwarding instance looks the owner up again. While a
partition moves (no owner known, the old one killed, the new one still folding) calls wait, retrying
with backoff, for up to `ROUTE_WAIT_S`, then answer UNAVAILABLE.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Final, TypeVar

import grpc
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.matchmaking.v1 import matchmaking_pb2_grpc as mm_grpc
from rummy_service.errors import ServiceError, Unavailable
from rummy_service.tls import PLAINTEXT, Tls

from rummy_matchmaking.app import NOT_OWNER, MatchmakingApp

FORWARDED: Final = "meldstream-forwarded"  # request metadata of a forwarded call
TICKET_ID: Final = "meldstream-ticket-id"  # request metadata: the ticket id an Enqueue is to use
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


def _key(message: mm.WatchTicketResponse) -> tuple[int, str]:
    return message.state, message.game_id


class Router:
    """Runs a call here when this instance serves its partition, else at the partition's owner."""

    def __init__(
        self, app: MatchmakingApp, owners: Owners, wait_s: float = ROUTE_WAIT_S, tls: Tls = PLAINTEXT
    ) -> None:
        self._app = app
        self._owners = owners
        self._wait_s = wait_s
        self._tls = tls  # peers are called as clients are: over TLS when TLS_CA_FILE is set
        self._channels: dict[str, grpc.aio.Channel] = {}

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()

    def _stub(self, address: str) -> Any:
        channel = self._channels.get(address)
        if channel is None:
            channel = self._channels[address] = self._tls.channel(address)
        return mm_grpc.MatchmakingServiceStub(channel)

    def _forwarded_metadata(self, context: Context, extra: tuple[tuple[str, str], ...]) -> list[Any]:
        passed = [(k, v) for k, v in context.invocation_metadata() or () if k == "authorization"]
        return [*passed, (FORWARDED, "1"), *extra]

    def _deadline(self, context: Context) -> float:
        remaining = context.time_remaining()
        wait = self._wait_s if remaining is None else min(self._wait_s, max(0.0, remaining - 0.5))
        return asyncio.get_running_loop().time() + wait

    def _owner(self, partition: int, context: Context) -> str | None:
        """The address to forward to, None to wait; `not_owner` for a call that was forwarded here."""
        if _forwarded(context):
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
        deadline = self._deadline(context)
        delay = 0.05
        while True:
            try:
                if partition in self._app.owned:
                    return await local()
                owner = self._owner(partition, context)
                if owner is not None:
                    call = getattr(self._stub(owner), method)
                    answer: Resp = await call(
                        request, metadata=self._forwarded_metadata(context, extra), timeout=CALL_TIMEOUT_S
                    )
                    return answer
                failure: ServiceError = Unavailable(NOT_OWNER, f"partition {partition} is moving: retry")
            except Unavailable as exc:
                if exc.code != NOT_OWNER or _forwarded(context):
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

    async def watch(
        self,
        partition: int,
        request: mm.WatchTicketRequest,
        context: Context,
        local: Callable[[], AsyncIterator[mm.WatchTicketResponse]],
    ) -> AsyncIterator[mm.WatchTicketResponse]:
        """The ticket's updates from wherever it is served, following it when it moves; after a move
        the owner's first answer (the state now) is sent on only if it is news."""
        loop = asyncio.get_running_loop()
        deadline = self._deadline(context)
        delay = 0.05
        last: tuple[int, str] | None = None
        while True:
            try:
                messages: AsyncIterator[mm.WatchTicketResponse] | None = None
                if partition in self._app.owned:
                    messages = local()
                else:
                    owner = self._owner(partition, context)
                    if owner is not None:
                        passed = self._forwarded_metadata(context, ())
                        messages = self._stub(owner).WatchTicket(request, metadata=passed)
                if messages is not None:
                    async for message in messages:
                        deadline, delay = self._deadline(context), 0.05
                        if _key(message) != last:
                            last = _key(message)
                            yield message
                    return
                failure: ServiceError = Unavailable(NOT_OWNER, f"partition {partition} is moving: retry")
            except Unavailable as exc:
                if exc.code != NOT_OWNER or _forwarded(context):
                    raise
                failure = exc
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.UNAVAILABLE:
                    raise Relayed(error) from None
                failure = Relayed(error)
            if loop.time() + delay > deadline:
                raise failure
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.5)


def _forwarded(context: Context) -> bool:
    return bool(metadata(context, FORWARDED))
