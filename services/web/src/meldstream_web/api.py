"""The HTTP/JSON side of the gateway: each handler is one call (or stream) of the platform's gRPC API
made with the caller's own token, its answer in protobuf's JSON mapping. The gateway adds no rules and
keeps no game state: a refused move is the engine's refusal, passed on with its rule code and message."""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import grpc
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.matchmaking.v1 import matchmaking_pb2_grpc as mm_grpc
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy.scoring.v1 import scoring_pb2_grpc as sc_grpc
from rummy_client import GameClient, RpcFailure
from rummy_rules.variants import PLAYABLE_VARIANTS, Variant, rules_for, variant_named
from rummy_service.auth import AuthError, TokenIssuer
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from meldstream_web import sse
from meldstream_web.bots import BotSeats
from meldstream_web.config import WebConfig
from meldstream_web.export import history_export
from meldstream_web.jsonpb import action_from_json, to_json
from meldstream_web.quickplay import BOT_NAMES, BOT_PREFIX, SHORT_MATCH, bot_names, short_options

NAME = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")
MAX_TABLE = len(BOT_NAMES) + 1
LIVE_LISTED = 30  # live games the lobby lists
HTTP_STATUS = {
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
}


class BadRequest(Exception):
    """The request itself is wrong (a missing field, no token): 400 or 401 with the reason, and a code
    the app acts on (`token_expired`: sign in again)."""

    def __init__(self, message: str, status: int = 400, code: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def refusal(status: grpc.StatusCode, details: str) -> JSONResponse:
    """A gRPC refusal as the app shows it: the rule (or reason) code and the service's message."""
    code, _, text = details.partition(":")
    body = {"status": status.name, "code": code.strip() if text else "", "message": details}
    return JSONResponse(body, status_code=HTTP_STATUS.get(status, 500))


@dataclass(slots=True)
class Gateway:
    """What the handlers share: the addresses and channels of the services, and the dev issuer."""

    config: WebConfig
    tokens: TokenIssuer
    bots: BotSeats
    matchmaking: grpc.aio.Channel
    scoring: grpc.aio.Channel

    # --- who is calling -------------------------------------------------------------------------

    def token(self, request: Request) -> str:
        """The caller's bearer token (header, or `token` query parameter for an EventSource)."""
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        token = token if scheme.lower() == "bearer" else request.query_params.get("token", "")
        if not token:
            raise BadRequest("sign in first (no bearer token)", 401)
        return token

    def player(self, token: str) -> str:
        try:
            return self.tokens.verify(token, time.time()).subject
        except AuthError as exc:
            raise BadRequest(str(exc), 401, exc.code) from None

    def _auth(self, token: str) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {token}"),)

    def client(self, token: str) -> GameClient:
        tls = self.config.tls
        return GameClient(
            self.config.engine,
            token,
            retry_for_s=15.0,
            credentials=tls.channel_credentials(),
            options=tls.channel_options(),
        )

    # --- handlers -------------------------------------------------------------------------------

    async def variants(self, _request: Request) -> Response:
        """The variants, what a short match of each is, and the facts the app shows beside the moves:
        the table sizes, the opening minimum (a person must know it before their first meld), each
        round's contract, whether the pile is spread and discards bought. The variants' own tables
        and defaults, read, not restated, so the app never tests a variant's name."""
        return JSONResponse(
            {
                "variants": list(PLAYABLE_VARIANTS),
                "short": {variant: text for variant, (_, text) in SHORT_MATCH.items()},
                "facts": {v: _facts(variant_named(v)) for v in PLAYABLE_VARIANTS},
            }
        )

    async def sign_in(self, request: Request) -> Response:
        """A token for a name: who you are is who you say (the platform's issuer, no accounts). It
        expires (`expires_at`, Unix seconds); the app signs in again with the same name before then."""
        body = await _json_body(request)
        name = str(body.get("name", "")).strip()
        if not NAME.match(name) or name.startswith(BOT_PREFIX):
            raise BadRequest(f"a name is 1-32 letters, digits, '.', '_' or '-', not starting {BOT_PREFIX!r}")
        token = self.tokens.issue(name)
        _, expires_at = self.tokens.claims(token, time.time())
        return JSONResponse({"player": name, "token": token, "expires_at": expires_at})

    async def rating(self, request: Request) -> Response:
        token = self.token(request)
        reply = await mm_grpc.MatchmakingServiceStub(self.matchmaking).GetRating(
            mm.GetRatingRequest(
                player_id=self.player(token), variant=request.query_params.get("variant", "kalooki")
            ),
            metadata=self._auth(token),
        )
        return JSONResponse(to_json(reply))

    async def quick_play(self, request: Request) -> Response:
        """A table of the caller and bots, created by the caller (a player may create a table they sit
        at); the bots are SDK clients the gateway runs, paced so a person can follow them."""
        token = self.token(request)
        player = self.player(token)
        body = await _json_body(request)
        variant = str(body.get("variant", ""))
        size = _int(body.get("players", 2), "players")
        if not 2 <= size <= MAX_TABLE:
            raise BadRequest(f"a table seats 2 to {MAX_TABLE} players")
        bots = bot_names(size)
        options = body.get("options") or {}
        if not isinstance(options, dict):
            raise BadRequest("options is an object of option names to values")
        if body.get("length", "full") == "short":
            options = {**short_options(variant), **options}
        turn_ms = _int(body.get("turn_timeout_ms", 0), "turn_timeout_ms")  # 0: the engine's default
        async with self.client(token) as client:
            created = await client.create_game(
                variant, [player, *bots], options=options, turn_timeout_ms=turn_ms
            )
        game_id = created.game_id
        pace = float(body.get("bot_pace_ms", self.config.bot_pace_ms)) / 1000
        for seat, bot in enumerate(bots, start=1):
            self.bots.start(self.config.engine, self.tokens.renewing(bot), game_id, seat, pace)
        return JSONResponse({"game_id": game_id, "seat": 0, "token": token})

    async def enqueue(self, request: Request) -> Response:
        """Queue through matchmaking (rated, or a private table by code)."""
        token = self.token(request)
        body = await _json_body(request)
        size = _int(body.get("players", 2), "players")
        reply = await mm_grpc.MatchmakingServiceStub(self.matchmaking).Enqueue(
            mm.EnqueueRequest(
                variant=str(body.get("variant", "")),
                min_players=size,
                max_players=size,
                private_code=str(body.get("code", "")),
            ),
            metadata=self._auth(token),
        )
        return JSONResponse(to_json(reply))

    async def watch_ticket(self, request: Request) -> Response:
        """A ticket's states until it is seated (game, seat and the seat's token) or cancelled."""
        token = self.token(request)
        player = self.player(token)
        ticket = request.path_params["ticket"]

        async def states() -> AsyncIterator[str]:
            call = mm_grpc.MatchmakingServiceStub(self.matchmaking).WatchTicket(
                mm.WatchTicketRequest(ticket_id=ticket), metadata=self._auth(token)
            )
            try:
                async for reply in call:
                    yield sse.message({**to_json(reply), "you": player}, event="ticket")
            except grpc.aio.AioRpcError as error:
                yield sse.message({"message": error.details() or error.code().name}, event="failure")
            yield sse.message({}, event="end")

        return sse.stream(states())

    async def cancel_ticket(self, request: Request) -> Response:
        token = self.token(request)
        reply = await mm_grpc.MatchmakingServiceStub(self.matchmaking).Cancel(
            mm.CancelRequest(ticket_id=request.path_params["ticket"]), metadata=self._auth(token)
        )
        return JSONResponse(to_json(reply))

    async def live_games(self, request: Request) -> Response:
        """The games being played now on the whole platform, newest first: scoring's list (it follows
        every game's events, whichever engine or gateway started them). A spectator watches any game."""
        self.player(self.token(request))  # signed in: the list is for the lobby
        reply = await sc_grpc.ScoringServiceStub(self.scoring).ListLiveGames(
            sc.ListLiveGamesRequest(limit=LIVE_LISTED)
        )
        return JSONResponse(to_json(reply))

    async def updates(self, request: Request) -> Response:
        """A seat's stream (`seat` given: its hand and legal actions) or a spectator's, resumed after
        `Last-Event-ID` when the browser reconnects."""
        token = self.token(request)
        game_id = request.path_params["game"]
        seat_param = request.query_params.get("seat", "")
        seat = _int(seat_param, "seat") if seat_param != "" else None
        after = _int(request.headers.get("last-event-id") or request.query_params.get("after", 0), "after")

        async def messages() -> AsyncIterator[str]:
            async with self.client(token) as client:
                try:
                    async for update in client.updates(game_id, seat, after):
                        yield sse.message(to_json(update), event="update", event_id=update.seq)
                        if update.view.phase == 4:  # PHASE_GAME_OVER: nothing follows
                            break
                except RpcFailure as failure:
                    yield sse.message({"code": failure.code, "message": failure.details}, event="failure")
            yield sse.message({}, event="end")

        return sse.stream(messages())

    async def act(self, request: Request) -> Response:
        """Submit one action for the caller's seat, as the app got it from the seat's legal actions."""
        token = self.token(request)
        body = await _json_body(request)
        try:
            action = action_from_json(body.get("action"))
        except ValueError as exc:
            raise BadRequest(f"not an action: {exc}") from None
        seat = _int(body.get("seat"), "seat")
        command_id = str(body.get("command_id") or uuid.uuid4().hex)
        game_id = request.path_params["game"]
        async with self.client(token) as client:
            answer = await client.submit(game_id, seat, action, command_id)
        if action.WhichOneof("kind") in ("buy_discard", "pass_buy"):
            self.bots.windows.answered(game_id)  # a bot holding the card for this person may draw
        return JSONResponse(to_json(answer))

    async def return_to_table(self, request: Request) -> Response:
        token = self.token(request)
        seat = _int((await _json_body(request)).get("seat"), "seat")
        async with self.client(token) as client:
            view = await client.return_to_table(request.path_params["game"], seat)
        return JSONResponse(to_json(view))

    async def view(self, request: Request) -> Response:
        token = self.token(request)
        seat_param = request.query_params.get("seat", "")
        async with self.client(token) as client:
            view = await client.view(
                request.path_params["game"], _int(seat_param, "seat") if seat_param else None
            )
        return JSONResponse(to_json(view))

    async def export(self, request: Request) -> Response:
        """A finished game's replay export (docs/replay-export.md), the document `meldstream replay
        --format json` writes, built from GetHistory: only the game's players and operators get it (the
        engine decides). `seat`: that seat's view, the other hands hidden."""
        game_id = request.path_params["game"]
        seat_param = request.query_params.get("seat", "")
        seat = _int(seat_param, "seat") if seat_param else None
        async with self.client(self.token(request)) as client:
            history = await client.history(game_id)
        if seat is not None and not 0 <= seat < len(history.seats):
            raise BadRequest(f"no seat {seat} at this table")
        return JSONResponse(await asyncio.to_thread(history_export, game_id, history, seat=seat))

    async def verify(self, request: Request) -> Response:
        async with self.client(self.token(request)) as client:
            return JSONResponse(to_json(await client.verify_shuffle(request.path_params["game"])))

    async def result(self, request: Request) -> Response:
        """Scoring's result of a finished game, or `{"pending": true}` until scoring has followed the
        game to its end: a result not there yet is a state the page polls through, not an error."""
        try:
            reply = await sc_grpc.ScoringServiceStub(self.scoring).GetMatchResult(
                sc.GetMatchResultRequest(game_id=request.path_params["game"]),
                metadata=self._auth(self.token(request)),
            )
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.NOT_FOUND:
                raise
            return JSONResponse({"pending": True})
        return JSONResponse(to_json(reply))


async def _json_body(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        raise BadRequest("the body is not JSON") from None
    if not isinstance(body, dict):
        raise BadRequest("the body is a JSON object")
    return body


def _int(value: object, name: str) -> int:
    try:
        return int(str(value))
    except ValueError:
        raise BadRequest(f"{name} is a whole number, not {str(value)[:20]!r}") from None


def _facts(variant: Variant) -> dict[str, Any]:
    return {
        "players": [variant.players.start, variant.players[-1]],
        "contracts": [str(contract) for contract in variant.round_contracts],
        "spread_pile": variant.spread_pile,
        "buys": variant.buys,
        "opening": rules_for(variant.id, 2).opening_min_points,
    }
