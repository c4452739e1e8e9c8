"""The gateway's ASGI app: the static browser app at `/`, the JSON API under `/api`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import grpc
from rummy_client import RpcFailure
from rummy_service.auth import TokenIssuer
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from meldstream_web.api import BadRequest, Gateway, refusal
from meldstream_web.bots import BotSeats
from meldstream_web.config import WebConfig

STATIC = Path(__file__).parent / "static"


async def _rpc_failure(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RpcFailure)
    return refusal(exc.status, exc.details)


async def _grpc_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, grpc.aio.AioRpcError)
    return refusal(exc.code(), exc.details() or "")


async def _bad_request(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, BadRequest)
    return JSONResponse({"status": "BAD_REQUEST", "code": exc.code, "message": str(exc)}, exc.status)


async def _index(_request: Request) -> Response:
    return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


def create_app(config: WebConfig) -> Starlette:
    holder: dict[str, Gateway] = {}

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        bots = BotSeats(config.tls)
        async with (
            config.tls.channel(config.matchmaking) as matchmaking,
            config.tls.channel(config.scoring) as scoring,
        ):
            tokens = TokenIssuer(config.token_secret, config.token_ttl_s)
            holder["gateway"] = Gateway(config, tokens, bots, matchmaking, scoring)
            try:
                yield
            finally:
                await bots.stop()

    def route(path: str, name: str, methods: list[str]) -> Route:
        async def endpoint(request: Request) -> Response:
            response: Response = await getattr(holder["gateway"], name)(request)
            return response

        return Route(path, endpoint, methods=methods)

    routes = [
        Route("/", _index),
        route("/api/variants", "variants", ["GET"]),
        route("/api/signin", "sign_in", ["POST"]),
        route("/api/rating", "rating", ["GET"]),
        route("/api/quickplay", "quick_play", ["POST"]),
        route("/api/queue", "enqueue", ["POST"]),
        route("/api/queue/{ticket}", "watch_ticket", ["GET"]),
        route("/api/queue/{ticket}", "cancel_ticket", ["DELETE"]),
        route("/api/games", "live_games", ["GET"]),
        route("/api/games/{game}/view", "view", ["GET"]),
        route("/api/games/{game}/updates", "updates", ["GET"]),
        route("/api/games/{game}/actions", "act", ["POST"]),
        route("/api/games/{game}/return", "return_to_table", ["POST"]),
        route("/api/games/{game}/export", "export", ["GET"]),
        route("/api/games/{game}/verify", "verify", ["GET"]),
        route("/api/games/{game}/result", "result", ["GET"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    return Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={
            RpcFailure: _rpc_failure,
            grpc.aio.AioRpcError: _grpc_error,
            BadRequest: _bad_request,
        },
    )
