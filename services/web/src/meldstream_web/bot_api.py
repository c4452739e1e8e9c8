"""The bot and board API, `/api/v1/...`: what a bot written in an afternoon in any language needs, over
plain HTTP with a bearer token, in the shape of the bot API its writer already knows (Lichess's): a
token exchange, an NDJSON stream of the account's games starting and ending, a game's NDJSON stream
(views, legal actions, the turn's deadline), a seat's own seed before the first deal, a move posted as
one of the listed legal actions, a seek (a table against the platform's bots, as the web app's "Play
against bots"), and challenges (challenges.py: another account asked to a private table, which it
accepts or declines).

Each route reuses the gateway's own calls (api.py: quick play, the move, the seed, the engine's
streams), so the rules, the checks and the refusals are the same as the web app's; errors are the
gateway's one JSON shape `{"status", "code", "message"}` with the services' reason codes. Every string
from outside is bounded before it is used (the body's bytes first, then each field's characters).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import grpc
import redis.exceptions
from rummy.game.v1 import game_service_pb2 as gs
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy.scoring.v1 import scoring_pb2_grpc as sc_grpc
from rummy_client import RpcFailure
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from meldstream_web import ndjson, openapi
from meldstream_web.api import BadRequest, Gateway, seed_from_hex
from meldstream_web.challenge_book import CREATED, Challenge, ChallengeBook, MemoryBook
from meldstream_web.challenges import Challenges
from meldstream_web.chat import Chat, beside, chat_json
from meldstream_web.jsonpb import action_from_json, to_json
from meldstream_web.sessions import Caller
from meldstream_web.tokens import small_json

log = logging.getLogger("meldstream_web")
MOVE_BODY: Final = 16 * 1024  # bytes of a move: a whole going-out turn of melds is a few KiB
LIMITS: Final[Mapping[str, int]] = {
    "api_token": 512,  # identity's limit on tokens
    "game": 64,
    "variant": 32,
    "length": 8,
    "command_id": 128,
}
MAX_SEAT: Final = 64  # more than any table seats: a larger number is refused here, not by protobuf
LIVE_POLL_S: Final = 1.0
"""How often the account event streams look at scoring's live games (one call a second per replica,
shared by every stream it serves)."""
LIVE_LISTED: Final = 100  # the most scoring lists


class LiveGames:
    """Scoring's list of live games, asked at most once per `LIVE_POLL_S` whatever the number of open
    event streams: a game of any origin (quick play, a queue, a tournament, another replica) is there."""

    def __init__(self, poll_s: float = LIVE_POLL_S) -> None:
        self.poll_s = poll_s
        self._games: list[sc.LiveGame] = []
        self._at = -poll_s
        self._lock = asyncio.Lock()

    async def games(self, scoring: grpc.aio.Channel) -> list[sc.LiveGame]:
        async with self._lock:
            if time.monotonic() - self._at >= self.poll_s:
                reply = await sc_grpc.ScoringServiceStub(scoring).ListLiveGames(
                    sc.ListLiveGamesRequest(limit=LIVE_LISTED)
                )
                self._games, self._at = list(reply.games), time.monotonic()
            return self._games


@dataclass(slots=True)
class BotApi:
    """The handlers of /api/v1; `gateway` answers the gateway (made when the app starts)."""

    gateway: Callable[[], Gateway]
    chat: Chat | None = None  # the table's chat, in the game stream and posted to it
    live: LiveGames = field(default_factory=LiveGames)
    book: ChallengeBook = field(default_factory=MemoryBook)  # the challenges (challenges.py)

    async def token(self, request: Request) -> Response:
        """A personal API token (a bot's) exchanged for an access token, as every client does at
        identity (`ExchangeApiToken`): `{"api_token"}` -> `{"access_token", "expires_at"}`."""
        body = await small_json(request)
        api_token = _text(body, "api_token")
        try:
            grant = await asyncio.to_thread(self.gateway().identity.exchange, api_token)
        except grpc.RpcError as error:
            raise RpcFailure(error.code(), error.details() or "") from None
        answer = {"access_token": grant.token, "expires_at": grant.expires_at}
        return JSONResponse(answer, headers={"Cache-Control": "no-store"})

    async def account(self, request: Request) -> Response:
        principal = (await self.gateway().caller(request)).principal
        return JSONResponse(
            {
                "player": principal.subject,
                "display_name": principal.name,
                "kind": principal.kind,
                "scopes": sorted(principal.scopes),
            }
        )

    async def variants(self, request: Request) -> Response:
        return await self.gateway().variants(request)

    async def seek(self, request: Request) -> Response:
        """A table of the caller and the house's bots (`{"variant", "players"?, "length"?}`), made by
        the web app's quick play; answers `{"game_id", "seat"}`, and the game starts on the account's
        event stream."""
        body = await small_json(request)
        length = _text(body, "length") or "short"
        if length not in ("short", "full"):
            raise BadRequest("length is short or full")
        players = body.get("players", 2)
        if not isinstance(players, int) or isinstance(players, bool):
            raise BadRequest("players is a whole number")
        forwarded = {"variant": _text(body, "variant"), "players": players, "length": length}
        return await self.gateway().quick_play(_replayed(request, forwarded))

    async def events(self, request: Request) -> Response:
        """The account's games as they start (`gameStart`: the game, its variant, players and the
        caller's seat; the games already being played come first) and end (`gameFinish`: scoring's
        result), and its challenges (`challenge` made or received, `challengeDeclined` to the
        challenger, `challengeCanceled` to the challenged), one JSON object a line."""
        caller = await self.gateway().caller(request)
        return ndjson.stream(self._events(caller.principal.subject))

    async def _events(self, player: str) -> AsyncIterator[dict[str, Any]]:
        scoring = self.gateway().scoring
        playing: set[str] = set()
        told: set[tuple[str, str]] = set()  # (challenge, event type) this stream has said
        while True:
            try:
                challenges = await self.book.of_account(player)
            except redis.exceptions.RedisError as error:  # Redis away for a moment: asked again next time
                log.warning("event streams: the challenges failed (%s)", type(error).__name__)
                challenges = []
            for challenge in challenges:
                kind = _challenge_event(challenge, player)
                if kind and (challenge.id, kind) not in told:
                    told.add((challenge.id, kind))
                    yield {"type": kind, "challenge": challenge.public()}
            try:
                listed = await self.live.games(scoring)
            except grpc.aio.AioRpcError as error:  # scoring away for a moment: the stream waits for it
                log.warning("event streams: scoring's live games failed (%s)", error.code().name)
                await asyncio.sleep(self.live.poll_s)
                continue
            mine = {g.game_id: g for g in listed if player in g.player_ids}
            for game_id, game in mine.items():
                if game_id not in playing:
                    seat = list(game.player_ids).index(player)
                    yield {"type": "gameStart", "game": {**to_json(game), "seat": seat}}
            for game_id in sorted(playing - mine.keys()):
                result = await _result(scoring, game_id)
                if result is None:  # off the list but not ended (newer games pushed it off): still ours
                    mine[game_id] = sc.LiveGame(game_id=game_id)
                else:
                    yield {"type": "gameFinish", "game": {"game_id": game_id}, "result": result}
            playing = set(mine)
            await asyncio.sleep(self.live.poll_s)

    async def game_stream(self, request: Request) -> Response:
        """One game, one JSON object a line: `gameState` updates (seq, event, the view after it and, when
        the caller's seat may act, its legal actions) until the game is over. The caller's seat's
        stream when it plays there, else a spectator's; `?after=SEQ` resumes after a seq. The table's
        chat lines the caller may read come in between as `chatLine` objects (chat.py)."""
        gateway = self.gateway()
        caller = await gateway.caller(request)
        game = _bounded(request.path_params["game"], "game")
        after = _whole(request.query_params.get("after", "0"), "after")
        async with gateway.client(caller.token) as client:
            seat = _seat_of(await client.view(game), caller.principal.subject)  # a refusal: before the stream

        async def updates() -> AsyncIterator[dict[str, Any]]:
            async with gateway.client(caller.token) as client:
                try:
                    async for update in client.updates(game, seat, after):
                        yield {"type": "gameState", "seat": seat, **to_json(update)}
                        if update.view.phase == gs.PHASE_GAME_OVER:
                            return
                except RpcFailure as failure:
                    yield {
                        "type": "error",
                        "status": failure.status.name,
                        "code": failure.code,
                        "message": failure.details,
                    }

        if self.chat is None:
            return ndjson.stream(updates())
        lines = (chat_json(line) async for line in self.chat.lines(caller, f"game:{game}"))
        return ndjson.stream(beside(updates(), lines))

    async def say(self, request: Request) -> Response:
        """`{"text"}`: a chat line at the game's table, with the web page's checks and limits (chat.py)."""
        if self.chat is None:
            raise BadRequest("chat is off on this gateway", 404, "no_chat")
        return await self.chat.post(request)

    async def move(self, request: Request) -> Response:
        """`{"action", "command_id"?, "seat"?}`: one of the seat's listed legal actions, sent as the web
        app sends it (the caller's seat found when not given); the engine's answer, or its refusal."""
        gateway = self.gateway()
        caller = await gateway.caller(request)
        game = _bounded(request.path_params["game"], "game")
        body = await small_json(request, MOVE_BODY)
        try:
            action = action_from_json(body.get("action"))
        except ValueError as exc:
            raise BadRequest(f"not an action: {str(exc)[:200]!r}") from None
        seat = await self._seat(caller, game, body.get("seat"))
        forwarded = {"action": to_json(action), "seat": seat, "command_id": _text(body, "command_id")}
        return await gateway.act(_replayed(request, forwarded))

    async def seed(self, request: Request) -> Response:
        """`{"seed", "seat"?}`: the seat's own seed before the first deal (ContributeSeed, docs/shuffle.md
        §1.1), 32-128 hex digits, through the web app's own call (the caller's seat found when not
        given); refused once the first deal is dealt or after another seed from the seat."""
        gateway = self.gateway()
        caller = await gateway.caller(request)
        game = _bounded(request.path_params["game"], "game")
        body = await small_json(request)
        seed = seed_from_hex(body.get("seed"))
        seat = await self._seat(caller, game, body.get("seat"))
        return await gateway.send_seed(caller.token, game, seat, seed)

    async def _seat(self, caller: Caller, game: str, given: object) -> int:
        """The caller's seat at `game`: `given` when sent (checked), else found in its view (one GetView)."""
        if given is not None:
            if not isinstance(given, int) or isinstance(given, bool) or not 0 <= given < MAX_SEAT:
                raise BadRequest(f"seat is a whole number from 0 to {MAX_SEAT - 1}")
            return given
        async with self.gateway().client(caller.token) as client:
            seat = _seat_of(await client.view(game), caller.principal.subject)
        if seat is None:
            raise BadRequest("you do not play at this table", 403, "not_at_table")
        return seat


def _challenge_event(challenge: Challenge, player: str) -> str:
    """What `player`'s event stream says of `challenge` now (Lichess's event types), or nothing."""
    if challenge.status == CREATED:
        return "challenge"
    if challenge.status == "declined" and player == challenge.challenger:
        return "challengeDeclined"
    if challenge.status == "canceled" and player == challenge.challenged:
        return "challengeCanceled"
    return ""


def _replayed(request: Request, body: dict[str, Any]) -> Request:
    """`request` with `body` (checked and bounded here) as its JSON body, for the web app's handler."""
    data = ndjson.line(body).encode()

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": data, "more_body": False}

    return Request(request.scope, receive)


async def _result(scoring: grpc.aio.Channel, game_id: str) -> dict[str, Any] | None:
    """Scoring's result of `game_id` (its queries need no token), or None while the match goes on (or
    scoring cannot say now: asked again at the next look)."""
    try:
        reply = await sc_grpc.ScoringServiceStub(scoring).GetMatchResult(
            sc.GetMatchResultRequest(game_id=game_id)
        )
    except grpc.aio.AioRpcError as error:
        if error.code() != grpc.StatusCode.NOT_FOUND:
            log.warning("event streams: scoring's result of a game failed (%s)", error.code().name)
        return None
    return to_json(reply) if reply.HasField("match") else None


def _seat_of(view: gs.PlayerView, player: str) -> int | None:
    return next((s.seat for s in view.seats if s.player_id == player), None)


def _bounded(value: str, name: str) -> str:
    limit = LIMITS[name]
    if len(value) > limit:
        raise BadRequest(f"{name} has {len(value)} characters; at most {limit}", code="too_long")
    return value


def _text(body: Mapping[str, Any], name: str) -> str:
    value = body.get(name, "")
    if not isinstance(value, str):
        raise BadRequest(f"{name} is a string")
    return _bounded(value, name)


def _whole(value: str, name: str) -> int:
    """A seq from outside: digits of a number a uint64 holds (a larger one would fail in the stream)."""
    if not value.isdigit() or len(value) > 19:
        raise BadRequest(f"{name} is a whole number of at most 19 digits, not {value[:20]!r}")
    return int(value)


def api_routes(api: BotApi) -> list[Route]:
    """The bot API's routes and its OpenAPI document (openapi.py), as app.py mounts them."""
    challenges = Challenges(api.gateway, api.book)
    return [
        Route("/api/openapi.json", openapi.document, methods=["GET"]),
        Route("/api/v1/openapi.json", openapi.document, methods=["GET"]),
        Route("/api/v1/token", api.token, methods=["POST"]),
        Route("/api/v1/account", api.account, methods=["GET"]),
        Route("/api/v1/variants", api.variants, methods=["GET"]),
        Route("/api/v1/seek", api.seek, methods=["POST"]),
        Route("/api/v1/stream/event", api.events, methods=["GET"]),
        Route("/api/v1/accounts/{name}", challenges.account, methods=["GET"]),
        Route("/api/v1/challenge", challenges.listed, methods=["GET"]),
        Route("/api/v1/challenge/{account}", challenges.create, methods=["POST"]),
        Route("/api/v1/challenge/{challenge}/accept", challenges.accept, methods=["POST"]),
        Route("/api/v1/challenge/{challenge}/decline", challenges.decline, methods=["POST"]),
        Route("/api/v1/challenge/{challenge}/cancel", challenges.cancel, methods=["POST"]),
        Route("/api/v1/games/{game}/stream", api.game_stream, methods=["GET"]),
        Route("/api/v1/games/{game}/move", api.move, methods=["POST"]),
        Route("/api/v1/games/{game}/seed", api.seed, methods=["POST"]),
        Route("/api/v1/games/{game}/chat", api.say, methods=["POST"]),
    ]
