"""Signing in with the operator's OpenID provider: its ID tokens, checked here with its own keys.

The web gateway runs the browser's authorization code flow (with PKCE) and hands identity the ID token
it received for the code, with the nonce it sent (`SignInWithProvider`). Identity trusts nothing in it
until it is verified: the provider's discovery document (`<issuer>/.well-known/openid-configuration`,
whose `issuer` must be the configured one exactly) names its key set (`jwks_uri`), both fetched over
HTTP and kept (`MAX_AGE_S`), the set fetched again when a token names a key it lacks (at most every
`min_interval_s`: a stream of forged kids cannot make identity hammer the provider). A token passes when
(OpenID Connect Core 3.1.3.7):

- its `alg` is one the discovery document lists for ID tokens and an asymmetric one (RSA, EC, OKP:
  never `none`, never an HMAC, whatever the document says), and its signature verifies with the
  provider's key of that `kid` (of the algorithm's key type, and of that `alg` when the key names one);
- `iss` is the issuer, `aud` holds the client id (with more audiences, `azp` is the client id), `exp` is
  to come and `iat` is past (a minute of leeway each way), `sub` is there (at most 255 characters);
- `nonce` is the one the gateway sent (compared in constant time).

What identity keeps of a provider's user is the issuer and subject (`provider_subject`), and a display
name, from the `name` or `preferred_username` claim (the ID token's, or the userinfo endpoint's when the
ID token names nobody, as in most providers' code flow: `profile`) reduced to printable text of 64
characters at most. Every string from the provider is hostile: bounded before use, quoted and cut in
refusals and logs.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import ipaddress
import json
import logging
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import httpx2
from joserfc import jws, jwt
from joserfc.errors import JoseError
from joserfc.jwk import Key, KeySet, import_key
from joserfc.jws import JWSRegistry
from rummy_service.config import ConfigError
from rummy_service.errors import Unauthenticated, Unavailable, quote
from rummy_service.limits import DISPLAY_NAME as DISPLAY_NAME_CHARS

log = logging.getLogger("rummy_identity")

ISSUER_VARIABLE: Final = "IDENTITY_OIDC_ISSUER"
CLIENT_VARIABLE: Final = "IDENTITY_OIDC_CLIENT_ID"
BAD_ID_TOKEN: Final = "bad_id_token"
UNREACHABLE: Final = "provider_unavailable"
DISCOVERY_PATH: Final = "/.well-known/openid-configuration"
MAX_AGE_S: Final = 3600.0
"""How long a discovery document and key set are kept before they are fetched again."""
MIN_INTERVAL_S: Final = 30.0
"""A token naming a key the set lacks fetches the set again, but not sooner than this after the last."""
LEEWAY_S: Final = 60
FETCH_TIMEOUT_S: Final = 5.0
MAX_DOCUMENT_BYTES: Final = 256 * 1024
MAX_SUBJECT_CHARS: Final = 255  # OpenID Connect Core 2: "It MUST NOT exceed 255 ASCII characters"
MAX_KEYS: Final = 50  # keys of the set read (a provider publishes a few)
MAX_CLAIM_CHARS: Final = 1024  # a name claim is read only this far before it is reduced to 64 characters
ASYMMETRIC: Final = frozenset(
    name for name, algorithm in JWSRegistry.algorithms.items() if algorithm.key_type in ("RSA", "EC", "OKP")
)
"""The signature algorithms an ID token may use: public-key ones only (no `none`, no HS256 et al.)."""
LOOPBACK_NAMES: Final = frozenset({"localhost"})

Fetch = Callable[[str, Mapping[str, str]], Awaitable[Any]]
"""GET a URL with headers; its JSON body (raises on an error status, a timeout, a body too large)."""


@dataclass(frozen=True, slots=True)
class ProviderSettings:
    """IDENTITY_OIDC_ISSUER and IDENTITY_OIDC_CLIENT_ID (empty issuer: no provider)."""

    issuer: str = ""
    client_id: str = ""

    @property
    def configured(self) -> bool:
        return bool(self.issuer)


def check_issuer(url: str, variable: str) -> str:
    """An issuer URL as OpenID Connect Discovery has it: https (http only to this machine's loopback, for
    development and tests), a host, no query or fragment. ConfigError naming `variable` otherwise."""
    parsed = urllib.parse.urlsplit(url)
    shaped = parsed.scheme in ("https", "http") and parsed.hostname and not (parsed.query or parsed.fragment)
    if not shaped or any(char.isspace() or char == "#" for char in url):
        raise ConfigError(f"{variable}={url[:80]!r} is not an issuer URL (https://HOST[/PATH], no query)")
    if parsed.scheme == "http" and not _loopback(parsed.hostname or ""):
        raise ConfigError(f"{variable}={url[:80]!r}: an issuer is reached over https (http only on loopback)")
    return url


def _loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def load_settings(issuer: str, client_id: str) -> ProviderSettings:
    if not issuer:
        if client_id:
            raise ConfigError(f"{CLIENT_VARIABLE} is set without {ISSUER_VARIABLE}")
        return ProviderSettings()
    if not client_id:
        raise ConfigError(f"{ISSUER_VARIABLE} is set without {CLIENT_VARIABLE} (the gateway's client id)")
    return ProviderSettings(check_issuer(issuer, ISSUER_VARIABLE), client_id)


@dataclass(frozen=True, slots=True)
class Verified:
    """An ID token that passed every check: who the provider says signed in."""

    issuer: str
    subject: str
    display_name: str  # "" when the token names nobody (ask the userinfo endpoint)
    alg: str  # what it was signed with (its `at_hash` is made with that algorithm's hash)
    access_token_hash: str  # its `at_hash`, if any

    @property
    def provider_subject(self) -> str:
        """The issuer and subject as an account keeps them: an issuer holds no space."""
        return f"{self.issuer} {self.subject}"


async def fetch_json(client: httpx2.AsyncClient, url: str, headers: Mapping[str, str]) -> Any:
    """GET `url`: its JSON body, at most MAX_DOCUMENT_BYTES, from a 200 answer (no redirect followed)."""
    async with client.stream("GET", url, headers=dict(headers)) as response:
        if response.status_code != 200:
            raise ValueError(f"HTTP {response.status_code} from {quote(url)}")
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > MAX_DOCUMENT_BYTES:
                raise ValueError(f"the answer of {quote(url)} is over {MAX_DOCUMENT_BYTES} bytes")
    return json.loads(bytes(body))


@dataclass(slots=True)
class Provider:
    """The operator's OpenID provider as identity knows it: its discovery document and key set."""

    settings: ProviderSettings
    fetch: Fetch | None = None  # None: over HTTP with httpx2 (`close` ends its connections)
    clock: Callable[[], float] = time.time
    min_interval_s: float = MIN_INTERVAL_S
    max_age_s: float = MAX_AGE_S
    _client: httpx2.AsyncClient | None = None
    _discovery: dict[str, Any] = field(default_factory=dict)
    _keys: KeySet | None = None
    _fetched_at: float = float("-inf")
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def _get(self, url: str, headers: Mapping[str, str] | None = None) -> Any:
        if self.fetch is not None:
            return await self.fetch(url, headers or {})
        if self._client is None:
            self._client = httpx2.AsyncClient(timeout=FETCH_TIMEOUT_S, follow_redirects=False)
        return await fetch_json(self._client, url, headers or {})

    # --- the provider's documents -----------------------------------------------------------------

    async def _refresh(self) -> None:
        """Fetch the discovery document and the key set (the ones held stay if this fails)."""
        issuer = self.settings.issuer
        discovery = await self._get(issuer.rstrip("/") + DISCOVERY_PATH)
        if not isinstance(discovery, dict) or discovery.get("issuer") != issuer:
            named = discovery.get("issuer") if isinstance(discovery, dict) else None
            raise ValueError(
                f"the discovery document names the issuer {quote(str(named))}, not {quote(issuer)} "
                f"({ISSUER_VARIABLE} must be the provider's issuer exactly)"
            )
        jwks_uri = discovery.get("jwks_uri")
        if not isinstance(jwks_uri, str) or not _same_security(jwks_uri, issuer):
            raise ValueError(f"the discovery document's jwks_uri {quote(str(jwks_uri))} is not usable")
        document = await self._get(jwks_uri)
        keys = document.get("keys") if isinstance(document, dict) else None
        if not isinstance(keys, list):
            raise ValueError("the provider's key set holds no `keys` list")
        self._keys = KeySet([key for item in keys[:MAX_KEYS] if (key := _signing_key(item)) is not None])
        self._discovery = discovery
        self._fetched_at = self.clock()

    async def _known(self, *, again: bool = False) -> tuple[dict[str, Any], KeySet]:
        """The documents held, fetched first when none are held, when their age is up, or (`again`: a
        token named a key the set lacks) when the last fetch is at least `min_interval_s` old."""
        async with self._lock:
            age = self.clock() - self._fetched_at
            if self._keys is None or age >= self.max_age_s or (again and age >= self.min_interval_s):
                try:
                    await self._refresh()
                except (httpx2.HTTPError, ValueError, JoseError, TypeError) as exc:
                    log.warning("OpenID provider %s: %s", quote(self.settings.issuer), _reason(exc))
                    if self._keys is None:
                        why = f"the OpenID provider's keys could not be fetched: retry ({_reason(exc)})"
                        raise Unavailable(UNREACHABLE, why) from None
            assert self._keys is not None
            return self._discovery, self._keys

    def algorithms(self, discovery: Mapping[str, Any]) -> frozenset[str]:
        """The provider's ID token algorithms that are asymmetric (OpenID Connect Discovery: RS256 when
        the document lists none)."""
        listed = discovery.get("id_token_signing_alg_values_supported") or ["RS256"]
        return frozenset(a for a in listed if isinstance(a, str)) & ASYMMETRIC

    # --- ID tokens --------------------------------------------------------------------------------

    async def verify(self, id_token: str, nonce: str) -> Verified:
        """The ID token's issuer, subject and name, once every check passed (UNAUTHENTICATED
        `bad_id_token` naming the first that failed)."""
        if not nonce:
            raise _refused("no nonce was given to compare the token's with")
        try:
            header = jws.extract_compact(id_token.encode()).protected  # read, not trusted: picks the key
        except (JoseError, ValueError) as exc:
            raise _refused(f"not a signed JWT ({_reason(exc)})") from None
        discovery, keys = await self._known()
        allowed = self.algorithms(discovery)
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in allowed:
            usable = ", ".join(sorted(allowed)) or "none usable"
            raise _refused(f"alg {quote(str(alg))} is not one of {usable}")
        kid = header.get("kid")
        if kid is not None and (not isinstance(kid, str) or len(kid) > 256):
            raise _refused("its kid is not a key id")
        key = self._key(keys, kid, alg)
        if key is None:
            _, keys = await self._known(again=True)
            key = self._key(keys, kid, alg)
        if key is None:
            raise _refused(f"the provider's key set has no {alg} key {quote(str(kid or ''))}")
        try:
            token = jwt.decode(id_token, key, algorithms=[alg], registry=JWSRegistry(algorithms=[alg]))
        except (JoseError, ValueError) as exc:
            raise _refused(f"its signature does not verify ({_reason(exc)})") from None
        return self._checked(token.claims, nonce, alg)

    def _key(self, keys: KeySet, kid: str | None, alg: str) -> Key | None:
        """The set's key for `kid` (none given: its only key of the algorithm's type), or None."""
        key_type = JWSRegistry.algorithms[alg].key_type
        if kid is None:
            fitting = [k for k in keys.keys if k.key_type == key_type]
            return fitting[0] if len(fitting) == 1 else None
        key = next((k for k in keys.keys if k.kid == kid), None)
        if key is None or key.key_type != key_type or (key.alg or alg) != alg:
            return None
        return key

    def _checked(self, claims: dict[str, Any], nonce: str, alg: str) -> Verified:
        settings = self.settings
        registry = jwt.JWTClaimsRegistry(
            now=lambda: int(self.clock()),
            leeway=LEEWAY_S,
            iss={"essential": True, "value": settings.issuer},
            aud={"essential": True, "value": settings.client_id},
            sub={"essential": True},
            exp={"essential": True},
            iat={"essential": True},
            nonce={"essential": True},
        )
        try:
            registry.validate(claims)
        except JoseError as exc:
            raise _refused(_claim_reason(exc)) from None
        audience = claims["aud"]
        azp = claims.get("azp")
        several = isinstance(audience, list) and len(audience) > 1
        if (several or azp is not None) and azp != settings.client_id:
            raise _refused("its authorized party (azp) is another client")
        sent = claims["nonce"]
        if not isinstance(sent, str) or not hmac.compare_digest(sent.encode(), nonce.encode()):
            raise _refused("its nonce is not the one of this sign-in")
        subject = claims["sub"]
        if not subject or len(subject) > MAX_SUBJECT_CHARS:
            raise _refused(f"its subject is empty or over {MAX_SUBJECT_CHARS} characters")
        at_hash = claims.get("at_hash")
        return Verified(
            settings.issuer,
            subject,
            display_name_of(claims),
            alg,
            at_hash if isinstance(at_hash, str) else "",
        )

    # --- the user's profile -----------------------------------------------------------------------

    async def profile_name(self, verified: Verified, access_token: str) -> str:
        """The display name the userinfo endpoint gives for the ID token's subject ("" when there is no
        endpoint, no access token, or the answer is for someone else or fails: the account's name then
        stands for it)."""
        if not access_token:
            return ""
        if verified.access_token_hash and not hmac.compare_digest(
            verified.access_token_hash.encode(), access_token_hash(access_token, verified.alg).encode()
        ):
            log.warning("OpenID provider: the access token is not the ID token's (at_hash): not used")
            return ""
        discovery, _ = await self._known()
        endpoint = discovery.get("userinfo_endpoint")
        if not isinstance(endpoint, str) or not _same_security(endpoint, self.settings.issuer):
            return ""
        try:
            answer = await self._get(endpoint, {"Authorization": f"Bearer {access_token}"})
        except (httpx2.HTTPError, ValueError) as exc:
            log.warning("OpenID provider's userinfo: %s", _reason(exc))
            return ""
        if not isinstance(answer, dict) or answer.get("sub") != verified.subject:
            log.warning("OpenID provider's userinfo answered for another subject: ignored")
            return ""
        return display_name_of(answer)


def access_token_hash(access_token: str, alg: str) -> str:
    """`at_hash` (OpenID Connect Core 3.1.3.6): the left half of the token's hash, with the hash of the
    ID token's algorithm (SHA-512 for the Ed25519 ones), base64url without padding."""
    size = next((bits for bits in ("256", "384", "512") if bits in alg), "512")
    digest = hashlib.new(f"sha{size}", access_token.encode()).digest()
    return base64.urlsafe_b64encode(digest[: len(digest) // 2]).decode().rstrip("=")


def display_name_of(claims: Mapping[str, Any]) -> str:
    """`name`, else `preferred_username`: printable characters only (controls, bidi overrides and
    other format characters dropped), at most 64; "" when neither gives any."""
    for claim in ("name", "preferred_username"):
        value = claims.get(claim)
        if isinstance(value, str):
            text = "".join(char for char in value[:MAX_CLAIM_CHARS] if char.isprintable()).strip()
            if text:
                return text[:DISPLAY_NAME_CHARS].rstrip()
    return ""


def _signing_key(item: object) -> Key | None:
    """A key of the provider's set that may verify a signature (public-key types only; a key joserfc
    cannot read, or meant for encryption, is left out)."""
    if not isinstance(item, dict) or item.get("kty") not in ("RSA", "EC", "OKP"):
        return None
    if item.get("use", "sig") != "sig":
        return None
    try:
        return import_key(item)
    except (JoseError, ValueError, TypeError, KeyError):
        return None


def _same_security(url: str, issuer: str) -> bool:
    """An endpoint the discovery document names: https, or http on loopback when the issuer is."""
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme == "https":
        return bool(parsed.hostname)
    return parsed.scheme == "http" and _loopback(parsed.hostname or "") and issuer.startswith("http://")


def _refused(why: str) -> Unauthenticated:
    return Unauthenticated(BAD_ID_TOKEN, f"the provider's ID token is refused: {why}")


def _claim_reason(exc: JoseError) -> str:
    claim = str(getattr(exc, "claim", "") or "")
    name = type(exc).__name__
    if name == "ExpiredTokenError":
        return "it has expired"
    if name == "MissingClaimError":
        return f"it lacks {quote(claim or _reason(exc))}"
    return f"its {quote(claim)} claim is wrong" if claim else _reason(exc)


def _reason(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 80 else text[:80] + "…"
