"""The HTTP/JSON side of the gateway: each handler is one call (or stream) of the platform's gRPC API
made with the caller's own access token (from its session cookies or its bearer header: `sessions`),
its answer in protobuf's JSON mapping. The gateway adds no rules and keeps no game state: a refused
move is the engine's refusal, passed on with its rule code and message."""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import grpc
from rummy.game.v1 import game_service_pb2 as gs
from rummy.identity.v1 import identity_pb2 as idp
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.matchmaking.v1 import matchmaking_pb2_grpc as mm_grpc
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy.scoring.v1 import scoring_pb2_grpc as sc_grpc
from rummy_client import GameClient, RpcFailure
from rummy_client.identity import Grant, IdentityClient, RenewingToken
from rummy_contracts.catalogue import words
from rummy_contracts.house import NAMES as HOUSE_BOTS
from rummy_contracts.house import house_bots
from rummy_contracts.wire import OUT_OF_TURN_KINDS
from rummy_rules.variants import PLAYABLE_VARIANTS, Variant, rules_for, variant_named
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from meldstream_web import sse
from meldstream_web.bot_runner import BotRunner
from meldstream_web.config import WebConfig
from meldstream_web.export import history_export
from meldstream_web.game_log import GameLog
from meldstream_web.jsonpb import action_from_json, to_json
from meldstream_web.oidc import COOKIE_MAX_AGE_S, FlowFailed, ProviderFlow, query_value, shown_code
from meldstream_web.quickplay import SHORT_MATCH, short_options
from meldstream_web.sessions import Caller, NotSignedIn, Sessions
from meldstream_web.sessions import check_csrf as check_page

log = logging.getLogger("meldstream_web")
MAX_TABLE = len(HOUSE_BOTS) + 1
LIVE_LISTED = 30  # live games the lobby lists
SEED_HEX_MAX = 128  # a seat's seed is at most 64 bytes (the engine checks 16-64)
HEX_BYTES = re.compile("(?:[0-9a-fA-F]{2})*")  # whole bytes; bytes.fromhex alone would skip spaces
HTTP_STATUS = {
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
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
    """A gRPC refusal as the app shows it: the rule (or reason) code and the service's message (a
    service's rate limit: 429, to retry in a second)."""
    code, _, text = details.partition(":")
    body = {"status": status.name, "code": code.strip() if text else "", "message": details}
    retry = {"Retry-After": "1"} if status == grpc.StatusCode.RESOURCE_EXHAUSTED else None
    return JSONResponse(body, status_code=HTTP_STATUS.get(status, 500), headers=retry)


@dataclass(slots=True)
class Gateway:
    """What the handlers share: the services' channels, the sessions, and the bots' own token."""

    config: WebConfig
    sessions: Sessions
    identity: IdentityClient
    bots: BotRunner
    bot_token: RenewingToken | None  # the gateway's service:bots token (None: no credential)
    matchmaking: grpc.aio.Channel
    scoring: grpc.aio.Channel
    oidc: ProviderFlow | None = None  # the operator's OpenID provider (None: WEB_OIDC_ISSUER unset)

    # --- who is calling -------------------------------------------------------------------------

    async def caller(self, request: Request) -> Caller:
        return await self.sessions.caller(request)

    async def lookup(self, caller: Caller, request: idp.LookupAccountRequest) -> idp.Account:
        """Another active account's public face (identity's LookupAccount, with the caller's token), or
        its refusal: 404 `no_account` for one that does not exist or may not play."""
        try:
            reply = await asyncio.to_thread(self.identity.call, "LookupAccount", request, caller.token)
        except grpc.RpcError as error:
            raise RpcFailure(error.code(), error.details() or "") from None
        found: idp.Account = reply.account
        return found

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
        round's contract, whether the pile is spread and discards bought; and the action kinds a seat
        may send out of turn (rules `OUT_OF_TURN`). The variants' own tables and defaults, read, not
        restated, so the app never tests a variant's name nor lists actions of its own."""
        return JSONResponse(
            {
                "variants": list(PLAYABLE_VARIANTS),
                "short": {variant: text for variant, (_, text) in SHORT_MATCH.items()},
                "facts": {v: _facts(variant_named(v)) for v in PLAYABLE_VARIANTS},
                "out_of_turn": sorted(OUT_OF_TURN_KINDS),
            }
        )

    # --- sessions -------------------------------------------------------------------------------

    async def _signed_in(self, request: Request, method: str, message: object) -> Response:
        """One sign-in call at identity; its session goes into the cookies, its account to the page."""
        check_page(request, self.config.public_origin)
        try:
            reply = await asyncio.to_thread(self.identity.call, method, message)
        except grpc.RpcError as error:
            raise RpcFailure(error.code(), error.details() or "") from None
        session: idp.Session = reply.session
        response = JSONResponse(_account_json(session.account, session.access_expires_at))
        grant = Grant(session.access_token, session.access_expires_at)
        self.sessions.set_session(response, grant, session.refresh_token)
        return response

    async def sign_up(self, request: Request) -> Response:
        body = await _json_body(request)
        message = idp.SignUpRequest(
            name=_text(body, "name"),
            display_name=_text(body, "display_name"),
            password=_text(body, "password"),
            device="web",
        )
        return await self._signed_in(request, "SignUp", message)

    async def sign_in(self, request: Request) -> Response:
        body = await _json_body(request)
        message = idp.SignInRequest(name=_text(body, "name"), password=_text(body, "password"), device="web")
        return await self._signed_in(request, "SignIn", message)

    async def guest(self, request: Request) -> Response:
        body = await _json_body(request)
        return await self._signed_in(
            request, "SignInAsGuest", idp.SignInAsGuestRequest(display_name=_text(body, "display_name"))
        )

    async def sign_out(self, request: Request) -> Response:
        """End this browser's session at identity and forget its cookies."""
        check_page(request, self.config.public_origin)
        refresh = request.cookies.get("ms_refresh", "")
        if refresh:
            await asyncio.to_thread(self.identity.sign_out, refresh)
        response = JSONResponse({"signed_out": True})
        self.sessions.clear(response)
        return response

    # --- the operator's OpenID provider (oidc.py) -----------------------------------------------

    async def provider(self, _request: Request) -> Response:
        """Whether this gateway signs people in with an OpenID provider, and the button's name for it."""
        flow = self.oidc
        return JSONResponse({"enabled": flow is not None, "name": flow.settings.name if flow else ""})

    def _flow(self) -> ProviderFlow:
        if self.oidc is None:
            raise BadRequest("this gateway has no OpenID provider (WEB_OIDC_ISSUER)", 404, "no_provider")
        return self.oidc

    async def provider_login(self, _request: Request) -> Response:
        """To the provider's sign-in page, with a state, a nonce and a PKCE challenge; their secrets stay
        in this browser's cookie for the callback."""
        flow = self._flow()
        try:
            started = await flow.start()
        except FlowFailed as failure:
            return _provider_failed(failure.code)
        response = RedirectResponse(started.url, status_code=302)
        response.set_cookie(
            flow.cookie_name,
            started.cookie,
            max_age=COOKIE_MAX_AGE_S,
            path="/",
            secure=flow.secure,
            httponly=True,
            samesite="lax",
        )
        return response

    async def provider_callback(self, request: Request) -> Response:
        """Back from the provider: the code exchanged, the ID token signed in at identity, the session
        set as /api/signin sets it, then the lobby; a failure goes back to the sign-in page with its code."""
        flow = self._flow()
        query = request.query_params
        try:
            if query.get("error") is not None:
                raise FlowFailed("provider_refused", "the provider refused the sign-in")
            kept = flow.pending(request.cookies.get(flow.cookie_name, ""), query_value(query.get("state")))
            code = query_value(query.get("code"))
            if not code:
                raise FlowFailed("code_refused", "the provider's answer holds no code")
            id_token, access_token = await flow.finish(code, kept)
        except FlowFailed as failure:
            log.info("provider sign-in stopped: %s (%s)", failure.code, failure)
            return self._end_flow(flow, _provider_failed(failure.code))
        message = idp.SignInWithProviderRequest(
            id_token=id_token, nonce=kept.nonce, device="web", access_token=access_token
        )
        try:
            if self.bot_token is None:
                raise BadRequest("this gateway has no service credential", 503, "no_provider")
            reply = await asyncio.to_thread(self.identity.call, "SignInWithProvider", message, self.bot_token)
        except grpc.RpcError as error:
            details = error.details() or ""
            log.warning("identity refused a provider sign-in: %r", details[:200])
            return self._end_flow(flow, _provider_failed(shown_code(details)))
        session: idp.Session = reply.session
        response = RedirectResponse("/#/lobby", status_code=303)
        grant = Grant(session.access_token, session.access_expires_at)
        self.sessions.set_session(response, grant, session.refresh_token)
        return self._end_flow(flow, response)

    def _end_flow(self, flow: ProviderFlow, response: Response) -> Response:
        response.delete_cookie(flow.cookie_name, path="/", secure=flow.secure, httponly=True, samesite="lax")
        return response

    async def me(self, request: Request) -> Response:
        """Who this browser is signed in as (`player` null when nobody: asking is not an error)."""
        try:
            p = (await self.caller(request)).principal
        except NotSignedIn:
            return JSONResponse({"player": None})
        return JSONResponse({"player": p.subject, "display_name": p.name, "kind": p.kind})

    async def jwks(self, _request: Request) -> Response:
        """Identity's public keys, as this gateway verifies with them (RFC 7517); 503 `no_keys` while it
        holds none (identity unreachable since it started), the fetch run off the event loop."""
        try:
            document = await asyncio.to_thread(self.sessions.jwks_document)
        except ConnectionError as exc:
            raise BadRequest(f"{exc}: try again shortly", 503, "no_keys") from None
        return Response(document, media_type="application/jwk-set+json")

    async def rating(self, request: Request) -> Response:
        caller = await self.caller(request)
        reply = await mm_grpc.MatchmakingServiceStub(self.matchmaking).GetRating(
            mm.GetRatingRequest(
                player_id=caller.principal.subject, variant=request.query_params.get("variant", "kalooki")
            ),
            metadata=self._auth(caller.token),
        )
        return JSONResponse(to_json(reply))

    async def quick_play(self, request: Request) -> Response:
        """A table of the caller and house bots, created by the caller (a player may seat themselves
        and the house's bots); the bots are SDK clients the gateway runs with its own `service:bots`
        token, paced so a person can follow them, and taken over by another replica if this one goes
        (bot_runner.py)."""
        caller = await self.caller(request)
        token, player = caller.token, caller.principal.subject
        if self.bot_token is None:
            raise BadRequest(
                "this gateway has no service credential to run bots with: its operator sets "
                "MELDSTREAM_SERVICE_CREDENTIAL (docs/operators)",
                503,
            )
        body = await _json_body(request)
        variant = str(body.get("variant", ""))
        size = _int(body.get("players", 2), "players")
        if not 2 <= size <= MAX_TABLE:
            raise BadRequest(f"a table seats 2 to {MAX_TABLE} players")
        bots = house_bots(size)
        options = body.get("options") or {}
        if not isinstance(options, dict):
            raise BadRequest("options is an object of option names to values")
        if body.get("length", "full") == "short":
            options = {**short_options(variant), **options}
        turn_ms = _int(body.get("turn_timeout_ms", 0), "turn_timeout_ms")  # 0: the engine's default
        bank = body.get("time_bank_ms")  # None: the engine's default; the engine bounds it
        bank_ms = None if bank is None else _int(bank, "time_bank_ms")
        if bank_ms is not None and not 0 <= bank_ms < 2**32:
            raise BadRequest("time_bank_ms is a whole number of milliseconds, 0 or more")
        async with self.client(token) as client:
            created = await client.create_game(
                variant, [player, *bots], options=options, turn_timeout_ms=turn_ms, time_bank_ms=bank_ms
            )
        game_id = created.game_id
        pace = float(body.get("bot_pace_ms", self.config.bot_pace_ms)) / 1000
        await self.bots.seat(game_id, list(range(1, size)), pace)
        return JSONResponse({"game_id": game_id, "seat": 0})

    async def enqueue(self, request: Request) -> Response:
        """Queue through matchmaking, rated or casual (private tables are /api/tables: a code typed
        here would seat whoever guesses it, so none is sent)."""
        token = (await self.caller(request)).token
        body = await _json_body(request)
        size = _int(body.get("players", 2), "players")
        reply = await mm_grpc.MatchmakingServiceStub(self.matchmaking).Enqueue(
            mm.EnqueueRequest(
                variant=str(body.get("variant", "")),
                min_players=size,
                max_players=size,
                casual=bool(body.get("casual", False)),
            ),
            metadata=self._auth(token),
        )
        return JSONResponse(to_json(reply))

    async def watch_ticket(self, request: Request) -> Response:
        """A ticket's states until it is seated (game, seat and the seat's token) or cancelled."""
        caller = await self.caller(request)
        token, player = caller.token, caller.principal.subject
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
        token = (await self.caller(request)).token
        reply = await mm_grpc.MatchmakingServiceStub(self.matchmaking).Cancel(
            mm.CancelRequest(ticket_id=request.path_params["ticket"]), metadata=self._auth(token)
        )
        return JSONResponse(to_json(reply))

    async def live_games(self, request: Request) -> Response:
        """The games being played now on the whole platform, newest first: scoring's list (it follows
        every game's events, whichever engine or gateway started them). A spectator watches any game."""
        await self.caller(request)  # signed in: the list is for the lobby
        reply = await sc_grpc.ScoringServiceStub(self.scoring).ListLiveGames(
            sc.ListLiveGamesRequest(limit=LIVE_LISTED)
        )
        return JSONResponse(to_json(reply))

    async def updates(self, request: Request) -> Response:
        """A seat's stream (`seat` given: its hand and legal actions) or a spectator's, resumed after
        `Last-Event-ID` when the browser reconnects; each update followed by the log's lines in words up
        to it (`game_log`: after the first, the whole history so far), in the language `lang` names."""
        token = (await self.caller(request)).token
        game_id = request.path_params["game"]
        seat_param = request.query_params.get("seat", "")
        seat = _int(seat_param, "seat") if seat_param != "" else None
        after = _int(request.headers.get("last-event-id") or request.query_params.get("after", 0), "after")

        async def messages() -> AsyncIterator[str]:
            async with self.client(token) as client:
                lines = GameLog(client, game_id, seat, words(request.query_params.get("lang", "")[:16]))
                try:
                    async for update in client.updates(game_id, seat, after):
                        yield sse.message(to_json(update), event="update", event_id=update.seq)
                        # After the update, so the table is never held up by the history's read.
                        yield sse.message({"lines": await lines.upto(update)}, event="log")
                        if update.view.phase == gs.PHASE_GAME_OVER:  # nothing follows
                            break
                except RpcFailure as failure:
                    yield sse.message({"code": failure.code, "message": failure.details}, event="failure")
            yield sse.message({}, event="end")

        return sse.stream(messages())

    async def act(self, request: Request) -> Response:
        """Submit one action for the caller's seat, as the app got it from the seat's legal actions."""
        token = (await self.caller(request)).token
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
        if action.WhichOneof("kind") in OUT_OF_TURN_KINDS:
            await self.bots.answered(game_id)  # a bot holding the card for this person may draw
        return JSONResponse(to_json(answer))

    async def return_to_table(self, request: Request) -> Response:
        token = (await self.caller(request)).token
        seat = _int((await _json_body(request)).get("seat"), "seat")
        async with self.client(token) as client:
            view = await client.return_to_table(request.path_params["game"], seat)
        return JSONResponse(to_json(view))

    async def contribute_seed(self, request: Request) -> Response:
        """The seat's own seed before the first deal (ContributeSeed), sent by the app as hex."""
        token = (await self.caller(request)).token
        body = await _json_body(request)
        seat = _int(body.get("seat"), "seat")
        return await self.send_seed(token, request.path_params["game"], seat, seed_from_hex(body.get("seed")))

    async def send_seed(self, token: str, game_id: str, seat: int, seed: bytes) -> Response:
        """ContributeSeed for the web app's route and the bot API's: the engine's answer, or its refusal
        (`bad_seed_length`, `seed_already_sent`, `seed_window_closed`)."""
        async with self.client(token) as client:
            answer = await client.contribute_seed(game_id, seat, seed)
        return JSONResponse(to_json(answer))

    async def view(self, request: Request) -> Response:
        token = (await self.caller(request)).token
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
        async with self.client((await self.caller(request)).token) as client:
            history = await client.history(game_id)
        if not any(entry.event.HasField("game_ended") for entry in history.entries):
            raise BadRequest("the replay export is made once the game has ended", 409, "game_not_over")
        if any(entry.redacted for entry in history.entries):
            raise BadRequest(
                "only the game's players and operators get its replay export", 403, "not_at_table"
            )
        if seat is not None and not 0 <= seat < len(history.seats):
            raise BadRequest(f"no seat {seat} at this table")
        return JSONResponse(await asyncio.to_thread(history_export, game_id, history, seat=seat))

    async def verify(self, request: Request) -> Response:
        async with self.client((await self.caller(request)).token) as client:
            return JSONResponse(to_json(await client.verify_shuffle(request.path_params["game"])))

    async def result(self, request: Request) -> Response:
        """Scoring's result of a finished game, or `{"pending": true}` until scoring has followed the
        game to its end: a result not there yet is a state the page polls through, not an error."""
        try:
            reply = await sc_grpc.ScoringServiceStub(self.scoring).GetMatchResult(
                sc.GetMatchResultRequest(game_id=request.path_params["game"]),
                metadata=self._auth((await self.caller(request)).token),
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


def seed_from_hex(text: object) -> bytes:
    """A seat's seed as the HTTP routes take it, hex digits, bounded before it is decoded; its 16-64
    bytes are the engine's to check (`bad_seed_length`), so the rule has one home."""
    if not isinstance(text, str):
        raise BadRequest("seed is a string of hex digits")
    if len(text) > SEED_HEX_MAX:
        raise BadRequest(
            f"seed has {len(text)} characters; at most {SEED_HEX_MAX} hex digits", code="too_long"
        )
    if not HEX_BYTES.fullmatch(text):
        raise BadRequest("a seed is hex digits", code="bad_seed")
    return bytes.fromhex(text)


def _text(body: dict[str, Any], name: str) -> str:
    value = body.get(name, "")
    if not isinstance(value, str):
        raise BadRequest(f"{name} is a string")
    return value


def _account_json(account: idp.Account, expires_at: int) -> dict[str, Any]:
    return {
        "player": account.account_id,
        "name": account.name,
        "display_name": account.display_name,
        "kind": idp.AccountKind.Name(account.kind).removeprefix("ACCOUNT_KIND_").lower(),
        "expires_at": expires_at,
    }


def _provider_failed(code: str) -> Response:
    """Back to the sign-in page, which says the provider's sign-in failed and why (`code`: a reason
    code, never text from the provider or the query)."""
    return RedirectResponse(f"/#/signin-failed/{code}", status_code=303)


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
