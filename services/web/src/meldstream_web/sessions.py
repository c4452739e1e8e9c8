"""Who the browser is: its session in cookies the page's script cannot read, renewed by the gateway.

Signing in (or up, or as a guest) at identity gives a session: the gateway keeps its refresh token in
an HttpOnly cookie scoped to /api and its current access token in another, both Secure and
SameSite=Strict, so no script, no other site and no URL ever holds a token. On each call the
gateway verifies the access token with identity's public keys; when it has expired (or is missing)
and a refresh token is there, it asks identity for a new one and sets it on the answer, so the page
never renews anything itself.

Cookies go with every request, so a state-changing call must also prove it comes from this page:
the `ms_csrf` cookie (readable by the page, random per browser) must come back in an
`X-CSRF-Token` header (double submit), and an `Origin` header, when sent, must be this gateway's.
Programs that send `Authorization: Bearer` instead carry nothing ambient and need neither.
"""

from __future__ import annotations

import asyncio
import hmac
import secrets
import time
from dataclasses import dataclass
from typing import Final

import grpc
from rummy_client.identity import Grant, IdentityClient
from rummy_service.auth import AuthError, Principal, TokenVerifier
from rummy_service.public_keys import keys_ready
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

ACCESS: Final = "ms_access"
REFRESH: Final = "ms_refresh"
CSRF: Final = "ms_csrf"
CSRF_HEADER: Final = "x-csrf-token"
UNSAFE: Final = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class NotSignedIn(Exception):
    """No usable session or token: 401 with `code` (`token_expired`: sign in again)."""

    def __init__(self, message: str, code: str = "unauthenticated", status: int = 401) -> None:
        super().__init__(message)
        self.code = code
        self.status = status


@dataclass(frozen=True, slots=True)
class Caller:
    """The caller's verified access token and who it names."""

    token: str
    principal: Principal


@dataclass(frozen=True, slots=True)
class CookiePolicy:
    secure: bool = True  # WEB_COOKIE_SECURE=0 only for plain http on another host than localhost
    origin: str = ""  # the public origin pages call from (WEB_PUBLIC_URL's); empty: the request's own
    refresh_max_age_s: int = 30 * 24 * 3600


class Sessions:
    def __init__(self, identity: IdentityClient, tokens: TokenVerifier, policy: CookiePolicy) -> None:
        self._identity = identity
        self._tokens = tokens
        self.policy = policy

    # --- who is calling -------------------------------------------------------------------------------

    async def caller(self, request: Request) -> Caller:
        """The caller of `request`: its bearer token, or its session's access token (renewed here
        when it expired; the new one is set on the answer by `set_cookies`)."""
        # Keys missed at start (identity slow or away then) are fetched once more here, off the loop,
        # rather than failing every call until the background retry, or renewing a good session.
        await keys_ready(self._tokens)
        scheme, _, bearer = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and bearer:
            return Caller(bearer, self._verify(bearer))
        if request.method in UNSAFE:
            check_csrf(request, self.policy.origin)
        access = request.cookies.get(ACCESS, "")
        if access:
            try:
                return Caller(access, self._tokens.verify(access, time.time()))
            except AuthError:
                pass  # expired or unknown: renew it below
        refresh = request.cookies.get(REFRESH, "")
        if not refresh:
            raise NotSignedIn("sign in first (no session)")
        try:
            grant = await asyncio.to_thread(self._identity.refresh, refresh)
        except grpc.RpcError as error:
            raise NotSignedIn(
                f"your session has ended: sign in again ({error.details()})",
                "token_expired",
            ) from None
        request.state.renewed = grant
        return Caller(grant.token, self._verify(grant.token))

    def jwks_document(self) -> str:
        """Identity's key set as last fetched (fetched now if none is held yet)."""
        if not self._tokens.jwks.loaded:
            self._tokens.jwks.refresh()
        return self._tokens.jwks.document

    def _verify(self, token: str) -> Principal:
        try:
            return self._tokens.verify(token, time.time())
        except AuthError as exc:
            raise NotSignedIn(str(exc), exc.code) from None

    # --- cookies ----------------------------------------------------------------------------------------

    def set_session(self, response: Response, access: Grant, refresh: str) -> None:
        self._set_access(response, access)
        response.set_cookie(
            REFRESH,
            refresh,
            max_age=self.policy.refresh_max_age_s,
            path="/api",
            secure=self.policy.secure,
            httponly=True,
            samesite="strict",
        )

    def _set_access(self, response: Response, access: Grant) -> None:
        response.set_cookie(
            ACCESS,
            access.token,
            max_age=max(1, int(access.expires_at - time.time())),
            path="/api",
            secure=self.policy.secure,
            httponly=True,
            samesite="strict",
        )

    def set_cookies(self, request: Request, response: Response) -> None:
        """After a call: the access token renewed on the way, and the page's CSRF cookie if missing."""
        renewed = getattr(request.state, "renewed", None)
        if isinstance(renewed, Grant):
            self._set_access(response, renewed)
        if not request.cookies.get(CSRF):
            response.set_cookie(
                CSRF, secrets.token_urlsafe(24), path="/", secure=self.policy.secure, samesite="strict"
            )

    def clear(self, response: Response) -> None:
        for name in (ACCESS, REFRESH):
            response.delete_cookie(
                name, path="/api", secure=self.policy.secure, httponly=True, samesite="strict"
            )


class CookieMiddleware:
    """Adds `Sessions.set_cookies` to every HTTP answer as it starts (streams included: their headers
    go out before their first event)."""

    def __init__(self, app: ASGIApp, sessions: Sessions) -> None:
        self._app = app
        self._sessions = sessions

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        request = Request(scope)

        async def with_cookies(message: Message) -> None:
            if message["type"] == "http.response.start":
                carrier = Response()
                self._sessions.set_cookies(request, carrier)
                cookies = [(k, v) for k, v in carrier.raw_headers if k == b"set-cookie"]
                message["headers"] = [*message.get("headers", []), *cookies]
            await send(message)

        await self._app(scope, receive, with_cookies)


def check_csrf(request: Request, public_origin: str = "") -> None:
    """403 `csrf` unless the call carries the page's CSRF token and comes from this origin: the
    operator's WEB_PUBLIC_URL when set (whatever a proxy forwards), else the request's own."""
    origin = request.headers.get("origin")
    expected = public_origin or f"{request.url.scheme}://{request.url.netloc}"
    if origin is not None and origin.lower() != expected:
        raise NotSignedIn("a call from another site's page is refused", "csrf", 403)
    sent = request.headers.get(CSRF_HEADER, "")
    kept = request.cookies.get(CSRF, "")
    if not kept or not hmac.compare_digest(sent.encode(), kept.encode()):
        raise NotSignedIn("the page's CSRF token is missing: reload the page", "csrf", 403)
