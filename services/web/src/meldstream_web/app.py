"""The gateway's ASGI app: the static browser app at `/`, the JSON API under `/api`, identity's public
keys at `/.well-known/jwks.json`, and the probes' `/healthz` and `/readyz` (health.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import grpc
from rummy_client import RpcFailure
from rummy_client.identity import IdentityClient
from rummy_service.errors import ServiceError
from rummy_service.public_keys import verifier
from rummy_service.rate_limits import Limiter
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from meldstream_web.api import BadRequest, Gateway, refusal
from meldstream_web.bot_api import BotApi, api_routes
from meldstream_web.bot_runner import BotRunner
from meldstream_web.challenge_book import challenge_book
from meldstream_web.chat import Chat, ChatLimited, chat_routes, limited
from meldstream_web.config import WebConfig, check_oidc
from meldstream_web.cors import ApiCors
from meldstream_web.headers import SecurityHeaders
from meldstream_web.health import Readiness, healthz
from meldstream_web.limits import LimitsMiddleware
from meldstream_web.messages import catalogue
from meldstream_web.oidc import ProviderFlow
from meldstream_web.private_tables import PrivateTablePages
from meldstream_web.sessions import CookieMiddleware, CookiePolicy, NotSignedIn, Sessions
from meldstream_web.tokens import TokenPages

STATIC = Path(__file__).parent / "static"


async def _rpc_failure(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RpcFailure)
    return refusal(exc.status, exc.details)


async def _grpc_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, grpc.aio.AioRpcError)
    return refusal(exc.code(), exc.details() or "")


async def _service_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ServiceError)
    return refusal(exc.status, str(exc))


async def _bad_request(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, BadRequest)
    if exc.status == 503:  # the gateway cannot serve it now (no keys, no credential): to retry later
        body = {"status": "UNAVAILABLE", "code": exc.code, "message": str(exc)}
        return JSONResponse(body, 503, headers={"Retry-After": "5"})
    return JSONResponse({"status": "BAD_REQUEST", "code": exc.code, "message": str(exc)}, exc.status)


async def _not_signed_in(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, NotSignedIn)
    return JSONResponse({"status": "UNAUTHENTICATED", "code": exc.code, "message": str(exc)}, exc.status)


async def _index(_request: Request) -> Response:
    return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


def create_app(config: WebConfig) -> Starlette:
    check_oidc(config)
    holder: dict[str, Gateway] = {}
    private_tables: dict[str, PrivateTablePages] = {}  # its channel is the lifespan's
    identity = IdentityClient(
        config.identity, credentials=config.tls.channel_credentials(), options=config.tls.channel_options()
    )
    tokens = verifier(config.identity, config.tls)
    sessions = Sessions(identity, tokens, CookiePolicy(config.cookie_secure, origin=config.public_origin))
    limiter = Limiter(config.redis)
    tokens_page = TokenPages(sessions, identity)
    readiness = Readiness(config, tokens)
    chat = Chat(config.chat, lambda: holder["gateway"], limiter, config.key_prefix)
    book = challenge_book(config.redis, config.key_prefix)

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        bot_token = identity.api_token(config.service_credential) if config.service_credential else None
        bots = BotRunner(config.engine, bot_token, config.redis, prefix=config.key_prefix, tls=config.tls)
        flow = ProviderFlow(config.oidc, config.cookie_secure) if config.oidc.configured else None
        await (
            readiness.start()
        )  # identity's keys fetched before the first call (if down, retried in the background)
        async with (
            config.tls.channel(config.matchmaking) as matchmaking,
            config.tls.channel(config.scoring) as scoring,
        ):
            private_tables["pages"] = PrivateTablePages(sessions, matchmaking)
            holder["gateway"] = Gateway(
                config, sessions, identity, bots, bot_token, matchmaking, scoring, oidc=flow
            )
            await bots.start()
            await chat.start(shared=bool(config.redis))
            try:
                yield
            finally:
                await chat.stop()
                await readiness.stop()
                await bots.stop()
                identity.close()
                await limiter.close()
                await book.close()

    def route(path: str, name: str, methods: list[str]) -> Route:
        async def endpoint(request: Request) -> Response:
            response: Response = await getattr(holder["gateway"], name)(request)
            return response

        return Route(path, endpoint, methods=methods)

    def table_route(path: str, name: str, methods: list[str]) -> Route:
        async def endpoint(request: Request) -> Response:
            response: Response = await getattr(private_tables["pages"], name)(request)
            return response

        return Route(path, endpoint, methods=methods)

    routes = [
        Route("/", _index),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readiness.readyz, methods=["GET"]),
        Route("/i18n/{lang}.json", catalogue, methods=["GET"]),
        route("/api/variants", "variants", ["GET"]),
        route("/api/signup", "sign_up", ["POST"]),
        route("/api/signin", "sign_in", ["POST"]),
        route("/api/guest", "guest", ["POST"]),
        route("/api/signout", "sign_out", ["POST"]),
        route("/api/me", "me", ["GET"]),
        route("/api/oidc", "provider", ["GET"]),
        route("/api/oidc/login", "provider_login", ["GET"]),
        route("/api/oidc/callback", "provider_callback", ["GET"]),
        route("/.well-known/jwks.json", "jwks", ["GET"]),
        route("/api/rating", "rating", ["GET"]),
        Route("/api/tokens", tokens_page.list_tokens, methods=["GET"]),
        Route("/api/tokens", tokens_page.create_token, methods=["POST"]),
        Route("/api/tokens/{token_id}", tokens_page.revoke_token, methods=["DELETE"]),
        Route("/api/bots", tokens_page.create_bot, methods=["POST"]),
        route("/api/quickplay", "quick_play", ["POST"]),
        table_route("/api/tables", "create", ["POST"]),
        table_route("/api/tables/by-code", "join_by_code", ["POST"]),
        table_route("/api/tables/{table}", "get", ["GET"]),
        table_route("/api/tables/{table}/join", "join", ["POST"]),
        table_route("/api/tables/{table}/approve", "approve", ["POST"]),
        table_route("/api/tables/{table}/remove", "remove", ["POST"]),
        table_route("/api/tables/{table}/rematch", "rematch", ["POST"]),
        route("/api/queue", "enqueue", ["POST"]),
        route("/api/queue/{ticket}", "watch_ticket", ["GET"]),
        route("/api/queue/{ticket}", "cancel_ticket", ["DELETE"]),
        route("/api/games", "live_games", ["GET"]),
        route("/api/games/{game}/view", "view", ["GET"]),
        route("/api/games/{game}/updates", "updates", ["GET"]),
        route("/api/games/{game}/actions", "act", ["POST"]),
        route("/api/games/{game}/return", "return_to_table", ["POST"]),
        route("/api/games/{game}/seed", "contribute_seed", ["POST"]),
        route("/api/games/{game}/export", "export", ["GET"]),
        route("/api/games/{game}/verify", "verify", ["GET"]),
        route("/api/games/{game}/result", "result", ["GET"]),
        *api_routes(BotApi(lambda: holder["gateway"], chat, book=book)),
        *chat_routes(chat),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        middleware=[Middleware(SecurityHeaders)],
        exception_handlers={
            RpcFailure: _rpc_failure,
            grpc.aio.AioRpcError: _grpc_error,
            BadRequest: _bad_request,
            ServiceError: _service_error,
            ChatLimited: limited,
            NotSignedIn: _not_signed_in,
        },
    )
    app.add_middleware(CookieMiddleware, sessions=sessions)
    app.add_middleware(LimitsMiddleware, limiter=limiter, limits=config.limits, tokens=tokens)
    app.add_middleware(ApiCors, origins=config.cors_origins)  # outermost: a 429 is readable cross-origin
    return app
