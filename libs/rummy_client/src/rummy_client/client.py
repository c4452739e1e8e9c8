"""`GameClient`: the engine's gRPC API with a bearer token, retries and resumable streams.

Actions are retried with the same command id when the engine is unavailable (restarting, or another
instance holds the game), so a retry can never play a move twice. Streams reconnect and resume after
the last seq received, so a client sees every update exactly once across engine restarts.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import Any, Final

import grpc
from rummy.game.v1 import game_service_pb2 as gs
from rummy.game.v1 import game_service_pb2_grpc as gs_grpc

from rummy_client.wire import option_to_pb

RETRYABLE: Final = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})


class RpcFailure(Exception):
    """A refused call: the gRPC status, the engine's reason code and its message."""

    def __init__(self, status: grpc.StatusCode, details: str) -> None:
        super().__init__(f"{status.name}: {details}")
        self.status = status
        self.details = details
        self.code = details.split(":", 1)[0]


def _failure(error: grpc.aio.AioRpcError) -> RpcFailure:
    return RpcFailure(error.code(), error.details() or "")


class GameClient:
    """One caller (token) talking to one engine address."""

    def __init__(self, target: str, token: str, retry_for_s: float = 60.0, timeout_s: float = 10.0) -> None:
        self._channel = grpc.aio.insecure_channel(target)
        self._stub = gs_grpc.GameServiceStub(self._channel)
        self._metadata = (("authorization", f"Bearer {token}"),)
        self._retry_for = retry_for_s
        self._timeout = timeout_s

    async def close(self) -> None:
        await self._channel.close()

    async def __aenter__(self) -> GameClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _call(self, method: Any, request: Any) -> Any:
        """A unary call, retried with backoff while the engine is unavailable."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._retry_for
        delay = 0.05
        while True:
            try:
                return await method(request, metadata=self._metadata, timeout=self._timeout)
            except grpc.aio.AioRpcError as error:
                if error.code() not in RETRYABLE or loop.time() + delay > deadline:
                    raise _failure(error) from None
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)

    async def create_game(
        self,
        variant: str,
        player_ids: list[str],
        game_id: str = "",
        options: Mapping[str, int | bool | str] | None = None,
        turn_timeout_ms: int = 0,
    ) -> gs.CreateGameResponse:
        request = gs.CreateGameRequest(
            game_id=game_id, variant=variant, player_ids=player_ids, turn_timeout_ms=turn_timeout_ms
        )
        for name, value in (options or {}).items():
            request.options[name].CopyFrom(option_to_pb(value))
        response: gs.CreateGameResponse = await self._call(self._stub.CreateGame, request)
        return response

    async def submit(
        self,
        game_id: str,
        seat: int,
        action: gs.Action,
        command_id: str | None = None,
        *,
        include_view: bool = False,
    ) -> gs.SubmitActionResponse:
        """Play `action`; the command id (new unless given) makes retries safe.

        The answer holds the seqs appended; the view after them arrives on the seat's stream, or in the
        answer too with `include_view` (one more render on the server).
        """
        request = gs.SubmitActionRequest(
            game_id=game_id,
            seat=seat,
            command_id=command_id or uuid.uuid4().hex,
            action=action,
            include_view=include_view,
        )
        response: gs.SubmitActionResponse = await self._call(self._stub.SubmitAction, request)
        return response

    async def view(self, game_id: str, seat: int | None = None) -> gs.PlayerView:
        request = gs.GetViewRequest(game_id=game_id)
        if seat is not None:
            request.seat = seat
        response: gs.GetViewResponse = await self._call(self._stub.GetView, request)
        return response.view

    async def legal_actions(self, game_id: str, seat: int) -> gs.ListLegalActionsResponse:
        request = gs.ListLegalActionsRequest(game_id=game_id, seat=seat)
        response: gs.ListLegalActionsResponse = await self._call(self._stub.ListLegalActions, request)
        return response

    async def return_to_table(self, game_id: str, seat: int) -> gs.PlayerView:
        request = gs.ReturnToTableRequest(game_id=game_id, seat=seat)
        response: gs.ReturnToTableResponse = await self._call(self._stub.ReturnToTable, request)
        return response.view

    async def state_at(self, game_id: str, seq: int, seat: int | None = None) -> gs.GetStateAtResponse:
        request = gs.GetStateAtRequest(game_id=game_id, seq=seq)
        if seat is not None:
            request.seat = seat
        response: gs.GetStateAtResponse = await self._call(self._stub.GetStateAt, request)
        return response

    async def history(self, game_id: str) -> gs.GetHistoryResponse:
        response: gs.GetHistoryResponse = await self._call(
            self._stub.GetHistory, gs.GetHistoryRequest(game_id=game_id)
        )
        return response

    async def verify_shuffle(self, game_id: str) -> gs.VerifyShuffleResponse:
        response: gs.VerifyShuffleResponse = await self._call(
            self._stub.VerifyShuffle, gs.VerifyShuffleRequest(game_id=game_id)
        )
        return response

    async def updates(
        self, game_id: str, seat: int | None = None, after_seq: int = 0
    ) -> AsyncIterator[gs.GameUpdate]:
        """A player's (or, with no seat, a spectator's) updates until the game ends.

        Reconnects after a lost connection and resumes after the last seq received.
        """
        last = after_seq
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._retry_for
        while True:
            call: Any
            if seat is None:
                call = self._stub.WatchGame(
                    gs.WatchGameRequest(game_id=game_id, after_seq=last), metadata=self._metadata
                )
            else:
                request = gs.StreamGameRequest(game_id=game_id, seat=seat, after_seq=last)
                call = self._stub.StreamGame(request, metadata=self._metadata)
            try:
                async for message in call:
                    update: gs.GameUpdate = message.update
                    last = max(last, update.seq)
                    deadline = loop.time() + self._retry_for
                    yield update
                return
            except grpc.aio.AioRpcError as error:
                if error.code() not in RETRYABLE or loop.time() > deadline:
                    raise _failure(error) from None
            await asyncio.sleep(0.2)
