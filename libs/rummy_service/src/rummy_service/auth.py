"""Bearer tokens: who is calling (a player id and a role), signed with HMAC-SHA256.

Roles: `player` (acts and looks for their own seat), `service` (another meldstream service, e.g.
matchmaking: may create tables for others) and `operator` (a human running the platform: may create
tables and read every finished game). Each service decides what a role may do; this module only says
who is calling.

A development issuer: one shared secret signs and verifies. The token is
`base64url(json claims) + "." + base64url(hmac)`, small enough for a header and checkable by any
service holding the secret. A real deployment swaps in an identity provider behind `TokenVerifier`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from rummy_service.errors import Unauthenticated

PLAYER: Final = "player"
SERVICE: Final = "service"
OPERATOR: Final = "operator"
ROLES: Final = (PLAYER, SERVICE, OPERATOR)
DEV_SECRET: Final = "meldstream-development-secret"  # only for the embedded default and tests


class AuthError(Exception):
    """The token is missing, malformed, badly signed or expired."""


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
    """Signs and verifies tokens with one secret. `now` is passed in: no clock inside."""

    def __init__(self, secret: str) -> None:
        if not secret:
            raise ValueError("the token secret must not be empty")
        self._key = secret.encode()

    def _sign(self, body: str) -> str:
        return _b64(hmac.new(self._key, body.encode(), hashlib.sha256).digest())

    def issue(self, subject: str, role: str = PLAYER, expires_at: int = 0) -> str:
        """A token for `subject`; `expires_at` in Unix seconds, 0 = no expiry (development)."""
        if not subject or role not in ROLES:
            raise ValueError(f"a token needs a subject and a role in {ROLES}")
        body = _b64(json.dumps({"sub": subject, "role": role, "exp": expires_at}, sort_keys=True).encode())
        return f"{body}.{self._sign(body)}"

    def verify(self, token: str, now: float) -> Principal:
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
        if expires and now >= expires:
            raise AuthError("token expired")
        return Principal(subject, role)


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
        raise Unauthenticated("unauthenticated", str(exc)) from None
