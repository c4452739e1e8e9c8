"""Matchmaking's calls run where their partition is served (`rummy_service.forwarding`), and a
ticket's watch follows its queue: the instance holding the stream re-opens it at the new owner and
sends on only what changed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Final

import grpc
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.matchmaking.v1 import matchmaking_pb2_grpc as mm_grpc
from rummy_service.errors import ServiceError, Unavailable
from rummy_service.forwarding import (
    NOT_OWNER,
    ROUTE_WAIT_S,
    Context,
    ForwardMarks,
    Owners,
    PartitionRouter,
    Relayed,
)
from rummy_service.tls import PLAINTEXT, Tls

from rummy_matchmaking.app import MatchmakingApp

TICKET_ID: Final = "meldstream-ticket-id"  # request metadata: the ticket id an Enqueue is to use


def _key(message: mm.WatchTicketResponse) -> tuple[int, str]:
    return message.state, message.game_id


class Router(PartitionRouter):
    """`PartitionRouter` for matchmaking's partitions, with the ticket watch that follows its queue."""

    def __init__(
        self,
        app: MatchmakingApp,
        owners: Owners,
        marks: ForwardMarks,
        wait_s: float = ROUTE_WAIT_S,
        tls: Tls = PLAINTEXT,
    ) -> None:
        super().__init__(
            lambda: app.owned, owners, mm_grpc.MatchmakingServiceStub, marks=marks, wait_s=wait_s, tls=tls
        )

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
        deadline = self.deadline(context)
        delay = 0.05
        last: tuple[int, str] | None = None
        while True:
            try:
                messages: AsyncIterator[mm.WatchTicketResponse] | None = None
                if self.serves(partition):
                    messages = local()
                else:
                    owner = self.owner(partition, "WatchTicket", context)
                    if owner is not None:
                        passed = self.forwarded_metadata(context, "WatchTicket", ())
                        messages = self.stub(owner).WatchTicket(request, metadata=passed)
                if messages is not None:
                    async for message in messages:
                        deadline, delay = self.deadline(context), 0.05
                        if _key(message) != last:
                            last = _key(message)
                            yield message
                    return
                failure: ServiceError = Unavailable(NOT_OWNER, f"partition {partition} is moving: retry")
            except Unavailable as exc:
                if exc.code != NOT_OWNER or self.forwarded(context, "WatchTicket"):
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
