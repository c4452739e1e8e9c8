"""The gRPC face of the engine: thin aio servicers that authenticate, check access, translate, delegate.

Rules and storage live in `app.py`; views in `rendering.py`, actions in `rummy_contracts.wire`; who may
do what in `access.py`.
Every view is built by `views.observe` for the caller's seat (or for nobody, for spectators), so no
message can carry another seat's hidden cards.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import grpc
from rummy.game.v1 import game_service_pb2 as gs
from rummy.game.v1 import game_service_pb2_grpc as gs_grpc
from rummy_contracts import sight, wire
from rummy_contracts.projection import engine_commands
from rummy_service import logs
from rummy_service.auth import Principal, TokenVerifier, authenticate
from rummy_service.errors import (
    InvalidArgument,
    NotFound,
    ServiceError,
    stream_errors,
    unary_errors,
)

from rummy_engine import access, limits, refusals, telemetry
from rummy_engine.app import GameApp, LiveGame
from rummy_engine.rendering import actions_pb, hands_to_pb, render, seats_to_pb, stream_update
from rummy_engine.seeds import check_contributed

Context = grpc.aio.ServicerContext[Any, Any]
R = TypeVar("R", gs.StreamGameResponse, gs.WatchGameResponse)
# How long a call about a game not there yet waits for it: matchmaking says a ticket is SEATED when it
# publishes the table, a moment before an engine has created the game from it, so a client's first
# call after SEATED would otherwise be NOT_FOUND, and every client would have to poll (the web app's
# private tables did not, and their players never saw their game). Waits back off, so an unknown id
# costs a handful of store reads.
GAME_APPEARS_S: Final = 5.0
FIRST_LOOK_S: Final = 0.05
MAX_TIME_BANK_MS: Final = 3_600_000  # an hour: a bank is for a long think, not a game left waiting


def _live_view(live: LiveGame, seat: int | None) -> gs.PlayerView:
    return render(live.state, seat, live.game_id, live.seq, live.deadline)


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is calling about which loaded game, with the seat they asked for already checked."""

    principal: Principal
    live: LiveGame


class GameServicer(gs_grpc.GameServiceServicer):
    """Each RPC: `limits.check`, `_caller` (authenticate, load, check the seat), then one call into the app.

    `unary_errors`/`stream_errors` turn any `ServiceError` raised on the way into its gRPC status.
    """

    def __init__(
        self, app: GameApp, tokens: TokenVerifier, refused: refusals.RefusalStream | None = None
    ) -> None:
        self._app = app
        self._tokens = tokens
        self._refused = refused  # where refused actions are recorded (refusals.py)

    def _principal(self, context: Context) -> Principal:
        principal = authenticate(self._tokens, context.invocation_metadata())
        logs.caller.set(principal.subject)  # named if the call ends refused (telemetry, the interceptor)
        return principal

    async def _caller(self, context: Context, game_id: str, seat: int | None = None) -> Caller:
        """The authenticated caller and the loaded game; `seat`, when given, must be the caller's."""
        principal = self._principal(context)
        if seat is None:
            access.check_spectator(principal)
        live = await self._appearing(game_id)
        if seat is not None:
            access.check_seat(live.state, principal, seat)
        return Caller(principal, live)

    async def _appearing(self, game_id: str) -> LiveGame:
        """The game, once it exists: NOT_FOUND `no_such_game` only after GAME_APPEARS_S without it."""
        deadline, pause = time.monotonic() + GAME_APPEARS_S, FIRST_LOOK_S
        while True:
            try:
                return await self._app.game(game_id)
            except NotFound:
                if time.monotonic() + pause > deadline:
                    raise
            await asyncio.sleep(pause)
            pause *= 2

    @unary_errors
    async def CreateGame(self, request: gs.CreateGameRequest, context: Context) -> gs.CreateGameResponse:
        limits.check(request)
        principal = self._principal(context)
        seating = access.seating(principal, request)
        options = {name: wire.option_from_pb(value) for name, value in request.options.items()}
        bank = request.time_bank_ms if request.HasField("time_bank_ms") else None
        if bank is not None and bank > MAX_TIME_BANK_MS:
            raise InvalidArgument("bad_time_bank", f"a time bank is at most {MAX_TIME_BANK_MS} ms")
        live = await self._app.create(
            request.game_id,
            request.variant,
            list(request.player_ids),
            options,
            request.turn_timeout_ms,
            requested_by=seating.requested_by,
            names=seating.names,
            bots=seating.bots,
            rated=seating.rated,
            time_bank_ms=bank,
        )
        return gs.CreateGameResponse(game_id=live.game_id, view=_live_view(live, None))

    @unary_errors
    async def SubmitAction(
        self, request: gs.SubmitActionRequest, context: Context
    ) -> gs.SubmitActionResponse:
        """`_submit`, counted and timed; a refusal is counted by its code and logged (telemetry)."""
        began = time.perf_counter()
        try:
            response = await self._submit(request, context)
        except ServiceError as exc:
            telemetry.refused(request, exc)
            raise
        telemetry.accepted(time.perf_counter() - began)
        return response

    async def _submit(self, request: gs.SubmitActionRequest, context: Context) -> gs.SubmitActionResponse:
        limits.check(request)
        principal = self._principal(context)
        live = await self._app.game(request.game_id)
        try:
            access.check_seat(live.state, principal, request.seat)
            try:
                command = wire.command_from_pb(request.seat, request.action)
            except wire.CodecError as exc:
                raise InvalidArgument("malformed_action", str(exc)) from None
            digest = hashlib.sha256(request.action.SerializeToString(deterministic=True)).hexdigest()[:16]
            outcome = await self._app.submit(
                request.game_id, request.seat, request.command_id, command, digest
            )
        except ServiceError as exc:  # a refused move of one of the game's players: on record first
            if self._refused is not None and refusals.on_record(exc, live.state.table.players, principal):
                entry = refusals.refusal(
                    game_id=request.game_id,
                    seat=request.seat,
                    player=principal.subject,
                    at=time.time(),
                    after_seq=live.seq,
                    command_id=request.command_id,
                    action=request.action,
                    code=exc.code,
                    message=exc.message,
                )
                await asyncio.to_thread(self._refused.record, entry)
            raise
        response = gs.SubmitActionResponse(
            first_seq=outcome.first_seq, last_seq=outcome.last_seq, duplicate=outcome.duplicate
        )
        if request.include_view:
            response.view.CopyFrom(
                render(outcome.state, request.seat, live.game_id, outcome.seq, live.deadline)
            )
        return response

    @unary_errors
    async def GetView(self, request: gs.GetViewRequest, context: Context) -> gs.GetViewResponse:
        limits.check(request)
        seat = request.seat if request.HasField("seat") else None
        live = (await self._caller(context, request.game_id, seat)).live
        return gs.GetViewResponse(view=_live_view(live, seat))

    @unary_errors
    async def ListLegalActions(
        self, request: gs.ListLegalActionsRequest, context: Context
    ) -> gs.ListLegalActionsResponse:
        limits.check(request)
        live = (await self._caller(context, request.game_id, request.seat)).live
        response = gs.ListLegalActionsResponse(seq=live.seq)
        response.actions.extend(actions_pb(live.state, request.seat))
        return response

    async def _stream(
        self, context: Context, game_id: str, seat: int | None, after_seq: int, response: type[R]
    ) -> AsyncIterator[R]:
        """Each update as a `response` (StreamGameResponse or WatchGameResponse), built in place."""
        live = (await self._caller(context, game_id, seat)).live
        async for update in self._app.watch(game_id, after_seq, watcher=seat is None, seat=seat):
            message = response()
            deadline = live.deadline if update.seq == live.seq else None
            stream_update(live.game_id, update, seat, deadline, into=message.update)
            yield message

    @stream_errors
    async def StreamGame(
        self, request: gs.StreamGameRequest, context: Context
    ) -> AsyncIterator[gs.StreamGameResponse]:
        limits.check(request)
        async for message in self._stream(
            context, request.game_id, request.seat, request.after_seq, gs.StreamGameResponse
        ):
            yield message

    @stream_errors
    async def WatchGame(
        self, request: gs.WatchGameRequest, context: Context
    ) -> AsyncIterator[gs.WatchGameResponse]:
        limits.check(request)
        async for message in self._stream(
            context, request.game_id, None, request.after_seq, gs.WatchGameResponse
        ):
            yield message

    @unary_errors
    async def ReturnToTable(
        self, request: gs.ReturnToTableRequest, context: Context
    ) -> gs.ReturnToTableResponse:
        limits.check(request)
        await self._caller(context, request.game_id, request.seat)
        live = await self._app.return_to_table(request.game_id, request.seat)
        return gs.ReturnToTableResponse(view=_live_view(live, request.seat))

    @unary_errors
    async def ContributeSeed(
        self, request: gs.ContributeSeedRequest, context: Context
    ) -> gs.ContributeSeedResponse:
        limits.check(request)  # a seed over 64 bytes is `too_long`, as any field over its limit
        check_contributed(request.seed)
        await self._caller(context, request.game_id, request.seat)
        outcome = await self._app.contribute_seed(request.game_id, request.seat, request.seed)
        view = render(outcome.state, request.seat, request.game_id, outcome.seq, None)
        return gs.ContributeSeedResponse(seq=outcome.first_seq, view=view)

    @unary_errors
    async def GetStateAt(self, request: gs.GetStateAtRequest, context: Context) -> gs.GetStateAtResponse:
        limits.check(request)
        seat = request.seat if request.HasField("seat") else None
        caller = await self._caller(context, request.game_id, seat)
        state, seq = await self._app.state_at(request.game_id, request.seq)
        response = gs.GetStateAtResponse(view=render(state, seat, request.game_id, seq, None))
        # Whether every hand may be shown depends on the game now, not at `seq` (replay after the end).
        if access.may_see_all_hands(caller.live.state, caller.principal):
            response.hands.extend(hands_to_pb(state.game))
            response.discard_pile.extend(wire.cards_to_pb(state.game.discard))
            stock = wire.cards_to_pb(state.game.stock)  # top card last, as the rules keep it
            response.stock.extend(stock)
            response.stock_top_first.extend(reversed(stock))
        return response

    @unary_errors
    async def GetHistory(self, request: gs.GetHistoryRequest, context: Context) -> gs.GetHistoryResponse:
        """The history so far, with only the cards the caller may see (`access.history_sight`)."""
        limits.check(request)
        seat = request.seat if request.HasField("seat") else None
        caller = await self._caller(context, request.game_id, seat)
        seen = access.history_sight(caller.live.state, caller.principal, seat)
        entries = await self._app.history(request.game_id)  # freshly parsed: cleared in place
        state = caller.live.state
        by_engine = engine_commands(message for _, message, _ in entries)
        return gs.GetHistoryResponse(
            entries=[
                gs.HistoryEntry(
                    event=message,
                    by_timer=message.command_id in by_engine,
                    redacted=sight.redact(message, seen),
                )
                for _, message, _ in entries
                if message.seq > request.after_seq
            ],
            seats=seats_to_pb(state),
        )

    @unary_errors
    async def VerifyShuffle(
        self, request: gs.VerifyShuffleRequest, context: Context
    ) -> gs.VerifyShuffleResponse:
        limits.check(request)
        access.check_spectator(self._principal(context))
        result = await self._app.verify(request.game_id)
        return gs.VerifyShuffleResponse(
            seed=result.seed,
            seed_commitment=result.seed_commitment,
            commitment_matches=result.commitment_matches,
            shuffles=[gs.ShuffleCheck(name=c.name, seq=c.seq, matches=c.matches) for c in result.shuffles],
            verified=result.verified,
            seat_seeds=result.seat_seeds,
            shuffle_seed=result.shuffle_seed,
        )
