"""Bearer tokens: who is calling (a player id and a role), signed with HMAC-SHA256.

Roles: `player` (acts and looks for their own seat), `service` (another meldstream service, e.g.
matchmaking: may create tables for others) and `operator` (a human running the platform: may create
tables and read every finished game). Each service decides what a role may do; this module only says
who is calling.

One shared secret (MELDSTREAM_TOKEN_SECRET) signs and verifies. The token is
`base64url(json claims) + "." + base64url(hmac)` with claims `{"sub", "role", "exp"}`, small enough for
a header and checkable by any service holding the secret. Every token expires: `exp` is Unix seconds,
an hour after issue unless the issuer is given another lifetime (MELDSTREAM_TOKEN_TTL_S). A token of an
older meldstream without an expiry (`exp` 0) is refused like an expired one: the holder gets a new one.
Whoever holds a token for long (a service's own calls, a bot playing a whole game) holds a
`RenewingToken` instead, which mints a fresh one before the last expires.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final

from rummy_service.errors import Unauthenticated

PLAYER: Final = "player"
SERVICE: Final = "service"
OPERATOR: Final = "operator"
ROLES: Final = (PLAYER, SERVICE, OPERATOR)
DEV_SECRET: Final = "meldstream-development-secret"  # development mode only (MELDSTREAM_DEV=1)
DEFAULT_TTL_S: Final = 3600
EXPIRED: Final = "token_expired"  # the refusal's code: get a new token (sign in again, `meldstream token`)


class AuthError(Exception):
    """The token is missing, malformed, badly signed or expired; `code` is the refusal's reason code."""

    def __init__(self, message: str, code: str = "unauthenticated") -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller: `subject` is the player id (or a service's or operator's name)."""

    subject: str
    role: str

    @property
    def is_operator(self) -> bool:
        return self.role == OPERATOR

    @property
    def is_player(self) -> bool:
        return self.role == PLAYER

    def is_player_named(self, player_ids: Iterable[str]) -> bool:
        """True for a player token whose subject is one of `player_ids` (never a service or operator)."""
        return self.is_player and self.subject in player_ids


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class TokenIssuer:
    """Signs and verifies tokens with one secret; each token lives `ttl_s` seconds from its issue."""

    def __init__(self, secret: str, ttl_s: int = DEFAULT_TTL_S) -> None:
        if not secret:
            raise ValueError("the token secret must not be empty")
        if ttl_s <= 0:
            raise ValueError("a token lifetime is a positive number of seconds")
        self._key = secret.encode()
        self.ttl_s = ttl_s

    def _sign(self, body: str) -> str:
        return _b64(hmac.new(self._key, body.encode(), hashlib.sha256).digest())

    def issue(self, subject: str, role: str = PLAYER, expires_at: int | None = None) -> str:
        """A token for `subject` that expires at `expires_at` (Unix seconds; default `ttl_s` from now)."""
        if not subject or role not in ROLES:
            raise ValueError(f"a token needs a subject and a role in {ROLES}")
        if expires_at is None:
            expires_at = int(time.time()) + self.ttl_s
        body = _b64(json.dumps({"sub": subject, "role": role, "exp": expires_at}, sort_keys=True).encode())
        return f"{body}.{self._sign(body)}"

    def verify(self, token: str, now: float) -> Principal:
        return self.claims(token, now)[0]

    def claims(self, token: str, now: float) -> tuple[Principal, int]:
        """Who `token` names and when it expires; `AuthError` unless it is genuine and alive at `now`."""
        body, dot, signature = token.partition(".")
        if not dot or not hmac.compare_digest(signature, self._sign(body)):
            raise AuthError("invalid token signature")
        try:
            claims = json.loads(_unb64(body))
            subject, role, expires = str(claims["sub"]), str(claims["role"]), int(claims["exp"])
        except (ValueError, KeyError, TypeError):
            raise AuthError("malformed token") from None
        if role not in ROLES or not subject:
            raise AuthError("malformed token")
        if not expires:
            raise AuthError("token without an expiry (an older meldstream's): get a new one", EXPIRED)
        if now >= expires:
            raise AuthError(
                f"token expired {_age(now - expires)} ago: get a new one (sign in again, or "
                "`meldstream token`)",
                EXPIRED,
            )
        return Principal(subject, role), expires

    def renewing(self, subject: str, role: str = PLAYER) -> RenewingToken:
        return RenewingToken(self, subject, role)


class RenewingToken:
    """A token for one subject, minted again once half its lifetime has passed.

    Called for each request (`GameClient` takes it in place of a token), so a holder that outlives one
    token, a bot through a long game or the engine forwarding tables, never sends an expired one.
    """

    def __init__(
        self, issuer: TokenIssuer, subject: str, role: str, clock: Callable[[], float] = time.time
    ) -> None:
        self._issuer = issuer
        self._subject = subject
        self._role = role
        self._clock = clock
        self._token = ""
        self._renew_at = 0.0

    def __call__(self) -> str:
        now = self._clock()
        if now >= self._renew_at:
            self._token = self._issuer.issue(self._subject, self._role, int(now) + self._issuer.ttl_s)
            self._renew_at = now + self._issuer.ttl_s / 2
        return self._token


def _age(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h"


def bearer(metadata: object) -> str:
    """The token in `authorization: Bearer <token>` call metadata; AuthError when absent."""
    for key, value in metadata or ():  # type: ignore[attr-defined]
        if key == "authorization":
            scheme, _, token = str(value).partition(" ")
            if scheme.lower() == "bearer" and token:
                return token
    raise AuthError("missing authorization: Bearer <token> metadata")


def authenticate(tokens: TokenIssuer, metadata: object) -> Principal:
    """The caller a gRPC call's bearer token names; `Unauthenticated` when it names nobody."""
    try:
        return tokens.verify(bearer(metadata), time.time())
    except AuthError as exc:
        raise Unauthenticated(exc.code, str(exc)) from None
