"""`GameClient`: the engine's gRPC API with a bearer token, retries, owner routing and resumable streams.

Actions are retried with the same command id when the engine is unavailable (restarting, or its game
moving to another instance), so a retry can never play a move twice. Any engine's address will do: an
engine asked about a game another engine owns names the owner (trailer `meldstream-owner`), and the
client sends that game's calls there from then on. Streams reconnect and resume after the last seq
received, so a client sees every update exactly once across engine restarts and moves.

Access tokens expire (10 minutes, by default): a client that lives longer takes a callable in the
token's place, asked for the token on every call (`rummy_client.identity.RenewingToken`, renewed with
a session's refresh token or an API token). TLS: pass `credentials`
(`grpc.ssl_channel_credentials(ca_pem)`); `options` may name the certificate's host
(`("grpc.ssl_target_name_override", name)`) when the address is an IP.
"""

from __future__ import annotations

import asyncio
import secrets
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, Final

import grpc
from rummy.game.v1 import game_service_pb2 as gs
from rummy.game.v1 import game_service_pb2_grpc as gs_grpc
from rummy_contracts.wire import option_to_pb

from rummy_client.identity import RenewingToken
from rummy_client.rate_limits import retry_after

RETRYABLE: Final = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
OWNER_TRAILER: Final = "meldstream-owner"
SLOW_READER: Final = "slow_reader"  # a stream closed for falling behind its game: resumed at once
LIMITED_FOR_S: Final = 30.0  # how long a call waits out rate limits (retry-after-ms) at most
ROUTES_KEPT: Final = 1024  # games whose owner this client remembers (most recently used)


class RpcFailure(Exception):
    """A refused call: the gRPC status, the engine's reason code and its message."""

    def __init__(self, status: grpc.StatusCode, details: str) -> None:
        super().__init__(f"{status.name}: {details}")
        self.status = status
        self.details = details
        self.code = details.split(":", 1)[0]


def _failure(error: grpc.aio.AioRpcError) -> RpcFailure:
    return RpcFailure(error.code(), error.details() or "")


def awaiting_seeds(view: gs.PlayerView) -> bool:
    """Whether the game waits for its seats' own seeds before its first deal (ContributeSeed)."""
    return view.deal == 0 and view.phase == gs.PHASE_DEAL_OVER


class GameClient:
    """One caller (token) talking to the engines, starting at `target`."""

    def __init__(
        self,
        target: str,
        token: str | Callable[[], str],
        retry_for_s: float = 60.0,
        timeout_s: float = 10.0,
        pace_s: float = 0.0,
        *,
        credentials: grpc.ChannelCredentials | None = None,
        options: Sequence[tuple[str, str]] = (),
    ) -> None:
        self._target = target
        self._pace = pace_s  # waited before each submit: bots a person watches (web, demo), paced tests
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._routes: OrderedDict[str, str] = OrderedDict()  # game id -> the address that owns it
        self._token = token
        self._credentials = credentials
        self._options = list(options)
        self._retry_for = retry_for_s
        self._timeout = timeout_s
        # What the caller did not see: calls sent again after an engine was unavailable (an owner's
        # redirect is not counted), and streams opened again after they broke.
        self.retries = 0
        self.resumes = 0

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()

    async def __aenter__(self) -> GameClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _metadata(self) -> tuple[tuple[str, str], ...]:
        token = self._token
        if isinstance(token, str):
            text = token
        elif isinstance(token, RenewingToken) and token.must_fetch:
            text = await asyncio.to_thread(token)  # waits for identity: never on the loop
        else:
            text = token()
        return (("authorization", f"Bearer {text}"),)

    def _stub(self, address: str) -> Any:
        channel = self._channels.get(address)
        if channel is None:
            if self._credentials is None:
                channel = grpc.aio.insecure_channel(address, options=self._options)
            else:
                channel = grpc.aio.secure_channel(address, self._credentials, options=self._options)
            self._channels[address] = channel
        return gs_grpc.GameServiceStub(channel)

    def _address(self, game_id: str) -> str:
        """The engine this client last found owning `game_id` (the target at first)."""
        return self._routes.get(game_id, self._target)

    def _owner(self, game_id: str, address: str, error: grpc.aio.AioRpcError) -> str | None:
        """The owner a refusal names, when it is not `address`; remembered as `game_id`'s route."""
        owner = next((str(v) for k, v in error.trailing_metadata() or () if k == OWNER_TRAILER), None)
        if not owner or owner == address:
            return None
        if game_id:
            self._routes[game_id] = owner
            self._routes.move_to_end(game_id)
            while len(self._routes) > ROUTES_KEPT:
                self._routes.popitem(last=False)
        return owner

    def _forget(self, game_id: str, address: str) -> None:
        """The engine a game was sent to is away (or no longer owns it): ask the target again, which
        names the owner as it knows it now, rather than waiting on one that may never answer."""
        if self._routes.get(game_id) == address:
            del self._routes[game_id]

    async def _call(self, method: str, request: Any) -> Any:
        """A unary call to the game's owner, retried with backoff while it is unavailable."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._retry_for
        limited_until = loop.time() + max(self._retry_for, LIMITED_FOR_S)
        delay = 0.05
        game_id = getattr(request, "game_id", "")
        address = self._address(game_id)
        while True:
            try:
                call = getattr(self._stub(address), method)
                return await call(request, metadata=await self._metadata(), timeout=self._timeout)
            except grpc.aio.AioRpcError as error:
                owner = self._owner(game_id, address, error)
                if owner is not None:
                    address = owner
                    continue  # sent to the owner at once
                if error.code() in RETRYABLE:  # the next call asks the target again, even after this one
                    self._forget(game_id, address)
                wait = retry_after(error)  # over a rate limit: back off as long as the engine says,
                limited = wait is not None and loop.time() + wait <= limited_until  # even without retries
                if not (error.code() in RETRYABLE and loop.time() + delay <= deadline) and not limited:
                    raise _failure(error) from None
            await asyncio.sleep(wait or delay)
            delay = min(delay * 2, 1.0)
            address = self._address(game_id)
            self.retries += 1

    async def create_game(
        self,
        variant: str,
        player_ids: list[str],
        game_id: str = "",
        options: Mapping[str, int | bool | str] | None = None,
        turn_timeout_ms: int = 0,
        *,
        player_names: Sequence[str] = (),
        bots: Sequence[bool] = (),
        rated: bool = False,
        time_bank_ms: int | None = None,
    ) -> gs.CreateGameResponse:
        """A game; `player_names`, `bots` and `rated` are honoured for services only (matchmaking's
        tables), a player's table showing the caller's own name. `time_bank_ms`: each seat's time
        bank (None: the engine's default, 0: none)."""
        request = gs.CreateGameRequest(
            game_id=game_id,
            variant=variant,
            player_ids=player_ids,
            turn_timeout_ms=turn_timeout_ms,
            player_names=player_names,
            bots=bots,
            rated=rated,
            time_bank_ms=time_bank_ms,
        )
        for name, value in (options or {}).items():
            request.options[name].CopyFrom(option_to_pb(value))
        response: gs.CreateGameResponse = await self._call("CreateGame", request)
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
        if self._pace > 0:
            await asyncio.sleep(self._pace)
        request = gs.SubmitActionRequest(
            game_id=game_id,
            seat=seat,
            command_id=command_id or uuid.uuid4().hex,
            action=action,
            include_view=include_view,
        )
        response: gs.SubmitActionResponse = await self._call("SubmitAction", request)
        return response

    async def view(self, game_id: str, seat: int | None = None) -> gs.PlayerView:
        request = gs.GetViewRequest(game_id=game_id)
        if seat is not None:
            request.seat = seat
        response: gs.GetViewResponse = await self._call("GetView", request)
        return response.view

    async def legal_actions(self, game_id: str, seat: int) -> gs.ListLegalActionsResponse:
        request = gs.ListLegalActionsRequest(game_id=game_id, seat=seat)
        response: gs.ListLegalActionsResponse = await self._call("ListLegalActions", request)
        return response

    async def return_to_table(self, game_id: str, seat: int) -> gs.PlayerView:
        request = gs.ReturnToTableRequest(game_id=game_id, seat=seat)
        response: gs.ReturnToTableResponse = await self._call("ReturnToTable", request)
        return response.view

    async def contribute_seed(
        self, game_id: str, seat: int, seed: bytes | None = None
    ) -> gs.ContributeSeedResponse:
        """Send the seat's own seed (default: 32 fresh random bytes) before the first deal, so that
        no one, the server included, can choose the deals (docs/shuffle.md)."""
        request = gs.ContributeSeedRequest(
            game_id=game_id, seat=seat, seed=secrets.token_bytes(32) if seed is None else seed
        )
        response: gs.ContributeSeedResponse = await self._call("ContributeSeed", request)
        return response

    async def offer_seed(self, game_id: str, seat: int, view: gs.PlayerView) -> bool:
        """`contribute_seed` with a random seed if `view` shows the game waiting for seeds (deal 0);
        False when it did not or was too late (the window closed, the seat sent one already)."""
        if not awaiting_seeds(view):
            return False
        try:
            await self.contribute_seed(game_id, seat)
        except RpcFailure as failure:
            if failure.status not in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.ALREADY_EXISTS):
                raise
            return False
        return True

    async def state_at(self, game_id: str, seq: int, seat: int | None = None) -> gs.GetStateAtResponse:
        request = gs.GetStateAtRequest(game_id=game_id, seq=seq)
        if seat is not None:
            request.seat = seat
        response: gs.GetStateAtResponse = await self._call("GetStateAt", request)
        return response

    async def history(
        self, game_id: str, seat: int | None = None, after_seq: int = 0
    ) -> gs.GetHistoryResponse:
        """The history so far as the caller may see it (`seat`: the caller's, to see its own cards),
        only the events after `after_seq`."""
        response: gs.GetHistoryResponse = await self._call(
            "GetHistory", gs.GetHistoryRequest(game_id=game_id, seat=seat, after_seq=after_seq)
        )
        return response

    async def verify_shuffle(self, game_id: str) -> gs.VerifyShuffleResponse:
        response: gs.VerifyShuffleResponse = await self._call(
            "VerifyShuffle", gs.VerifyShuffleRequest(game_id=game_id)
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
            address = self._address(game_id)
            stub = self._stub(address)
            if seat is None:
                call = stub.WatchGame(
                    gs.WatchGameRequest(game_id=game_id, after_seq=last), metadata=await self._metadata()
                )
            else:
                request = gs.StreamGameRequest(game_id=game_id, seat=seat, after_seq=last)
                call = stub.StreamGame(request, metadata=await self._metadata())
            try:
                async for message in call:
                    update: gs.GameUpdate = message.update
                    last = max(last, update.seq)
                    deadline = loop.time() + self._retry_for
                    yield update
                return
            except grpc.aio.AioRpcError as error:
                if self._owner(game_id, address, error) is not None:
                    continue  # resume at the owner at once
                if error.code() in RETRYABLE:
                    self._forget(game_id, address)
                # Fell behind the game (`slow_reader`): resume at once. Over a limit (spectators,
                # rates): after the delay the engine gives.
                behind = (error.details() or "").startswith(SLOW_READER)
                wait = 0.0 if behind else retry_after(error)
                if (error.code() not in RETRYABLE and wait is None) or loop.time() > deadline:
                    raise _failure(error) from None
            await asyncio.sleep(0.2 if wait is None else wait)
            self.resumes += 1
