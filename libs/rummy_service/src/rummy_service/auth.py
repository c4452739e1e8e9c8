"""Who is calling: access tokens issued by the identity service, verified here with its public keys.

An access token is a compact JWS, `alg` EdDSA (Ed25519) with the signing key's `kid`, whose claims
name the account (`sub`, the player id at tables), its scopes (`scope`, space-separated), what the
account is (`kind`), the name shown at tables (`name`), the issuer and the audience, and a short life
(`exp`). Only the identity service holds private keys (`rummy_identity`); every other service holds
the public keys of its JWK Set (`Jwks`, fetched from identity and refreshed as its answer says), so
none of them can make a token. Verifying uses joserfc, which refuses `alg` none, an HMAC made with
the public key as its secret and any key id the set lacks, before anything here reads a claim.

Why EdDSA and not RFC 9864's newer "Ed25519" name for the same signature: every JOSE library client
writers use knows EdDSA. joserfc warns on each use of it, so `REGISTRY` is its registry with that one
algorithm allowed and the warning left out (the only deviation from the library's defaults).

Scopes decide what a token may do (`require`): `play` (a person's seat), `bot:play` (a bot account's
seat), `watch` (spectate, read public results), `operate` (an operator) and `service:<name>` (one
meldstream service calling another, e.g. `service:matchmaking` creating the tables it formed).
"""

from __future__ import annotations

import contextlib
import copy
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final

from joserfc import jws, jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet
from joserfc.jws import JWSRegistry

from rummy_service.errors import PermissionDenied, Unauthenticated

ISSUER: Final = "meldstream-identity"
AUDIENCE: Final = "meldstream"
ALGORITHM: Final = "EdDSA"
TOKEN_TYPE: Final = "at+jwt"  # RFC 9068: an access token, never an ID token passed off as one


def _quiet_eddsa() -> JWSRegistry:
    eddsa = copy.copy(JWSRegistry.algorithms[ALGORITHM])
    eddsa.security_warning = None
    registry = JWSRegistry(algorithms=[ALGORITHM])
    registry.algorithms = {**JWSRegistry.algorithms, ALGORITHM: eddsa}  # this registry's own, not the class's
    return registry


REGISTRY: Final = _quiet_eddsa()
"""joserfc's JWS registry allowing EdDSA only, without its deprecation warning (see above)."""

PLAY: Final = "play"
BOT_PLAY: Final = "bot:play"
WATCH: Final = "watch"
OPERATE: Final = "operate"
SERVICE_PREFIX: Final = "service:"
SEAT_SCOPES: Final = frozenset({PLAY, BOT_PLAY})
"""Either lets a token act for the seat its subject sits at."""

HUMAN: Final = "human"
BOT: Final = "bot"
GUEST: Final = "guest"
OPERATOR: Final = "operator"
HOUSE_BOT: Final = "house_bot"
SERVICE: Final = "service"
KINDS: Final = (HUMAN, BOT, GUEST, OPERATOR, HOUSE_BOT, SERVICE)

EXPIRED: Final = "token_expired"  # the refusal's code: refresh the token (or sign in again)
MAX_TOKEN_CHARS: Final = 4096  # checked before any parsing: a token is a few hundred characters
VERIFIED_KEPT: Final = 10_000  # tokens whose verification is remembered until they expire


def service_scope(name: str) -> str:
    return SERVICE_PREFIX + name


class AuthError(Exception):
    """The token is missing, malformed, badly signed, expired or meant for others; `code` is the
    refusal's reason code."""

    def __init__(self, message: str, code: str = "unauthenticated") -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller: `subject` is the account id (the player id at tables), `name` the name shown."""

    subject: str
    scopes: frozenset[str]
    kind: str = HUMAN
    name: str = ""

    def has(self, scope: str) -> bool:
        return scope in self.scopes

    @property
    def is_operator(self) -> bool:
        return OPERATE in self.scopes

    @property
    def plays(self) -> bool:
        """May act for a seat (its own): a person's or a bot account's token."""
        return not SEAT_SCOPES.isdisjoint(self.scopes)

    @property
    def is_service(self) -> bool:
        return any(scope.startswith(SERVICE_PREFIX) for scope in self.scopes)

    @property
    def rated(self) -> bool:
        """An account whose games may be rated: people with an account (not guests, bots or staff)."""
        return self.kind == HUMAN

    def is_player_named(self, player_ids: Iterable[str]) -> bool:
        """True for a seat-playing token whose subject is one of `player_ids`."""
        return self.plays and self.subject in player_ids


def require(principal: Principal, *scopes: str) -> None:
    """PERMISSION_DENIED `missing_scope` unless the token carries one of `scopes`."""
    if principal.scopes.isdisjoint(scopes):
        raise PermissionDenied("missing_scope", f"this call needs a token with scope {' or '.join(scopes)}")


class Jwks:
    """The identity service's public keys, as the last JWK Set fetched; `fetch` returns (JSON, max
    age in seconds).

    Fetched in a thread of its own (`background`), again when its age is up and, at most every
    `min_interval_s`, when a token names a key it lacks: never on the caller's thread, since a
    service answering calls on an event loop (identity itself among them, in `meldstream run`) must
    not wait there for identity. Identity publishes a key well before it signs with it, so a token
    naming an unknown key is rare: it is refused (UNAUTHENTICATED, retry) while the set is fetched.
    Without `background` (identity's own keys, read in memory) `fetch` is called inline.
    """

    def __init__(
        self,
        fetch: Callable[[], tuple[str, float]],
        *,
        background: bool = True,
        min_interval_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._fetch = fetch
        self._background = background
        self._min_interval = min_interval_s
        self._clock = clock
        self._lock = threading.Lock()
        self._keys: KeySet | None = None
        self._kids: frozenset[str] = frozenset()
        self._fresh_until = 0.0
        self._fetched_at = -min_interval_s
        self._asked_at = -min_interval_s
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._first = threading.Lock()
        self._tries = 0
        self.document = '{"keys": []}'
        """The last set as fetched, served again by the gateway at /.well-known/jwks.json."""

    def refresh(self) -> None:
        """Fetch the set now, on the calling thread (raises what `fetch` raises; the keys held stay)."""
        document, max_age = self._fetch()
        keys = KeySet.import_key_set(json.loads(document))
        kids = frozenset(str(key.kid) for key in keys.keys)
        with self._lock:
            self._keys, self._kids, self.document = keys, kids, document
            self._fetched_at = self._clock()
            self._fresh_until = self._fetched_at + max_age
        if self._background:
            self._start()  # from the first set on, it is kept fresh in the background

    def load_if_missing(self) -> bool:
        """Whether a set is held, fetching it now on the calling thread if not. Callers that arrive
        while a fetch is under way wait for it and take its outcome, so a crowd of first calls while
        identity is slow makes one fetch, not one each."""
        if self.loaded:
            return True
        tries = self._tries
        with self._first:
            if not self.loaded and self._tries == tries:
                self._tries += 1
                with contextlib.suppress(Exception):  # identity away: the caller is told by `loaded`
                    self.refresh()
        return self.loaded

    def keys_for(self, kid: str) -> KeySet:
        """The set, if it holds `kid` (else AuthError, and the set is fetched again soon)."""
        now = self._clock()
        if now >= self._fresh_until or kid not in self._kids:
            self._ask(now)
        with self._lock:
            keys, known = self._keys, kid in self._kids
        if keys is None:
            raise AuthError("the identity service's keys are not here yet: retry in a moment")
        if not known:
            raise AuthError(f"no key {kid[:40]!r} in the identity service's set (retry in a moment)")
        return keys

    def _ask(self, now: float) -> None:
        if not self._background:
            if now - self._asked_at >= self._min_interval or now >= self._fresh_until:
                self._asked_at = now
                with contextlib.suppress(Exception):
                    self.refresh()
            return
        self._start()
        self._wake.set()

    def _start(self) -> None:
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._keep, name="jwks", daemon=True)
                    self._thread.start()

    def _keep(self) -> None:
        """The fetching thread: when the set's age is up, and when asked (a token named a key the set
        lacks), but then not sooner than `min_interval_s` after the last fetch."""
        while True:
            self._wake.wait(max(0.0, self._fresh_until - self._clock()))
            self._wake.clear()
            since = self._clock() - self._fetched_at
            if since < self._min_interval and self._clock() < self._fresh_until:
                time.sleep(self._min_interval - since)
            try:
                self.refresh()
            except Exception:  # identity away: try again in a while
                time.sleep(self._min_interval)

    @property
    def loaded(self) -> bool:
        return bool(self._kids)


class TokenVerifier:
    """Checks access tokens against `jwks`; a token once verified is remembered until it expires, so
    a stream of calls with one token pays for one signature check."""

    def __init__(self, jwks: Jwks) -> None:
        self.jwks = jwks
        self._verified: OrderedDict[str, tuple[Principal, int]] = OrderedDict()
        self._lock = threading.Lock()

    def verify(self, token: str, now: float) -> Principal:
        return self.claims(token, now)[0]

    def claims(self, token: str, now: float) -> tuple[Principal, int]:
        """Who `token` names and when it expires; `AuthError` unless genuine, ours and alive at `now`."""
        with self._lock:
            known = self._verified.get(token)
        if known is None:
            known = self._check(token)
            with self._lock:
                self._verified[token] = known
                while len(self._verified) > VERIFIED_KEPT:
                    self._verified.popitem(last=False)
        expires = known[1]
        if now >= expires:
            raise AuthError(
                f"token expired {_age(now - expires)} ago: refresh it (or sign in again)", EXPIRED
            )
        return known

    def _check(self, token: str) -> tuple[Principal, int]:
        if len(token) > MAX_TOKEN_CHARS:
            raise AuthError(
                f"token of {len(token)} characters; an access token has at most {MAX_TOKEN_CHARS}"
            )
        try:
            kid = _kid(token)
            decoded = jwt.decode(token, self.jwks.keys_for(kid), algorithms=[ALGORITHM], registry=REGISTRY)
        except (JoseError, ValueError) as exc:
            raise AuthError(f"invalid token: {_reason(exc)}") from None
        if decoded.header.get("typ") != TOKEN_TYPE:
            raise AuthError("invalid token: not an access token (typ)")
        claims = decoded.claims
        if claims.get("iss") != ISSUER:
            raise AuthError("invalid token: another issuer's")
        audience = claims.get("aud")
        if audience != AUDIENCE and not (isinstance(audience, list) and AUDIENCE in audience):
            raise AuthError("invalid token: meant for another audience")
        try:
            subject, kind, expires = str(claims["sub"]), str(claims["kind"]), int(claims["exp"])
            scopes = frozenset(str(claims["scope"]).split())
        except (KeyError, TypeError, ValueError):
            raise AuthError("invalid token: malformed claims") from None
        if not subject or kind not in KINDS:
            raise AuthError("invalid token: malformed claims")
        return Principal(subject, scopes, kind, str(claims.get("name", ""))), expires


def _kid(token: str) -> str:
    header = jws.extract_compact(token.encode()).protected  # parsed, not trusted: only to pick the key
    kid = header.get("kid")
    if not isinstance(kid, str) or not kid:
        raise ValueError("no key id (kid)")
    return kid


def _reason(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 80 else text[:80] + "…"


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


def authenticate(tokens: TokenVerifier, metadata: object) -> Principal:
    """The caller a gRPC call's bearer token names; `Unauthenticated` when it names nobody."""
    try:
        return tokens.verify(bearer(metadata), time.time())
    except AuthError as exc:
        raise Unauthenticated(exc.code, str(exc)) from None
