"""Access tokens: the one place the platform's tokens are made (claims: `rummy_service.auth`)."""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass

from joserfc import jwt
from joserfc.jwk import OKPKey
from rummy.identity.v1 import records_pb2 as rec
from rummy_service.auth import ALGORITHM, AUDIENCE, ISSUER, REGISTRY, TOKEN_TYPE, Principal

from rummy_identity.keys import KeyPolicy, Sealer, private_key, signing


class NoSigningKey(Exception):
    """The keyring has no key that signs yet (identity is still starting)."""


@dataclass(frozen=True, slots=True)
class Issued:
    token: str
    expires_at: int


class TokenMint:
    """Signs access tokens with the keyring's current key; the opened key is kept until it changes."""

    def __init__(self, sealer: Sealer, policy: KeyPolicy) -> None:
        self._sealer = sealer
        self.policy = policy
        self._opened: tuple[str, OKPKey] | None = None

    def issue(
        self,
        keyring: rec.Keyring,
        principal: Principal,
        now: int,
        *,
        session: str = "",
        ttl_s: int | None = None,
    ) -> Issued:
        key = signing(keyring, now)
        if key is None:
            raise NoSigningKey("no signing key yet")
        if self._opened is None or self._opened[0] != key.kid:
            self._opened = (key.kid, private_key(key, self._sealer))
        expires = now + (self.policy.access_ttl_s if ttl_s is None else ttl_s)
        claims = {
            "iss": ISSUER,
            "aud": AUDIENCE,
            "sub": principal.subject,
            "iat": now,
            "exp": expires,
            "jti": secrets.token_hex(8),
            "scope": _scope(principal.scopes),
            "kind": principal.kind,
            "name": principal.name,
            **({"sid": session} if session else {}),
        }
        header = {"alg": ALGORITHM, "kid": key.kid, "typ": TOKEN_TYPE}
        token = jwt.encode(header, claims, self._opened[1], algorithms=[ALGORITHM], registry=REGISTRY)
        return Issued(token, expires)


def _scope(scopes: Iterable[str]) -> str:
    return " ".join(sorted(scopes))
