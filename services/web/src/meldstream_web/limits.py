"""The gateway's own limits (`rummy_service.rate_limits`): per account for a signed-in call (its
session cookie or bearer token), per address otherwise; over a limit the answer is 429 with
Retry-After. In Redis when the gateway has one (REDIS_URL), so every replica counts together."""

from __future__ import annotations

import math
import time

from rummy_service.auth import AuthError, TokenVerifier
from rummy_service.rate_limits import Limiter, LimitSettings
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from meldstream_web.sessions import ACCESS


class LimitsMiddleware:
    def __init__(self, app: ASGIApp, limiter: Limiter, limits: LimitSettings, tokens: TokenVerifier) -> None:
        self._app = app
        self._limiter = limiter
        self._account = limits.per_account
        self._address = limits.per_address
        self._tokens = tokens

    def _subject(self, request: Request) -> str:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        token = token if scheme.lower() == "bearer" else request.cookies.get(ACCESS, "")
        if not token:
            return ""
        try:
            return self._tokens.verify(token, time.time()).subject
        except AuthError:
            return ""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not str(scope.get("path", "")).startswith("/api/"):
            await self._app(scope, receive, send)
            return
        request = Request(scope)
        subject = self._subject(request)
        if subject:
            wait = await self._limiter.retry_after(self._account, "web-account", subject)
        else:
            address = request.client.host if request.client is not None else ""
            wait = await self._limiter.retry_after(self._address, "web-address", address)
        if wait is None:
            await self._app(scope, receive, send)
            return
        seconds = max(1, math.ceil(wait))
        answer = JSONResponse(
            {
                "status": "RESOURCE_EXHAUSTED",
                "code": "rate_limited",
                "message": f"too many calls: retry in {seconds} s",
            },
            status_code=429,
            headers={"Retry-After": str(seconds)},
        )
        await answer(scope, receive, send)
