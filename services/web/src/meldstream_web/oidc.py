"""Signing in with the operator's OpenID provider: the browser's authorization code flow, with PKCE.

`GET /api/oidc/login` fetches the provider's discovery document (kept an hour), makes a state, a nonce
and a PKCE verifier (S256), keeps the three in a short-lived cookie of the browser's own (HttpOnly,
Secure, SameSite=Lax so the provider's redirect back carries it; `__Host-` so no other host of the
domain can plant one), and sends the browser to the provider's authorization endpoint. Nothing is kept
on the gateway: any replica serves the callback.

`GET /api/oidc/callback?code&state`: the state must be the cookie's (in constant time), the code is
exchanged at the token endpoint with the client's secret and the verifier (authlib's OAuth 2 client),
and the ID token, with the nonce, goes to identity's SignInWithProvider under the gateway's own
service token: identity verifies it with the provider's keys and answers the account's session, which
becomes the browser's session cookies as at `/api/signin`. Whatever the provider or the query says is
hostile: bounded, never echoed but as one of a few codes the page shows.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import re
import secrets
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

import httpx2
from authlib.integrations.base_client import OAuthError
from authlib.integrations.httpx_client import AsyncOAuth2Client

log = logging.getLogger("meldstream_web")

SCOPE: Final = "openid profile"
COOKIE: Final = "__Host-ms_oidc"  # the `__Host-` prefix needs Secure; without it (WEB_COOKIE_SECURE=0):
PLAIN_COOKIE: Final = "ms_oidc"
COOKIE_MAX_AGE_S: Final = 600  # the time a person has on the provider's pages
DISCOVERY_PATH: Final = "/.well-known/openid-configuration"
DISCOVERY_MAX_AGE_S: Final = 3600.0
TIMEOUT_S: Final = 10.0
MAX_DOCUMENT_BYTES: Final = 256 * 1024
MAX_PARAMETER_CHARS: Final = 2048  # `code` and `state` from the query
MAX_ID_TOKEN_CHARS: Final = 8192  # identity's limits (rummy_identity.server.LIMITS)
MAX_ACCESS_TOKEN_CHARS: Final = 4096
CODE: Final = re.compile(r"[a-z_]{1,40}")
"""What a refusal's code must look like to be shown (else `provider_failed`)."""


@dataclass(frozen=True, slots=True)
class OidcSettings:
    """WEB_OIDC_*: the provider, this gateway's client there, and where the provider sends people back."""

    issuer: str = ""
    client_id: str = ""
    client_secret: str = ""  # empty: a public client (PKCE alone)
    redirect_uri: str = ""
    name: str = ""  # the button's "Sign in with <name>"

    @property
    def configured(self) -> bool:
        return bool(self.issuer)


class FlowFailed(Exception):
    """The sign-in cannot go on: `code` is what the page shows (one of this module's few)."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code


@dataclass(frozen=True, slots=True)
class Started:
    url: str  # the provider's authorization URL to send the browser to
    cookie: str  # the state, nonce and verifier, for the browser to bring back


@dataclass(frozen=True, slots=True)
class Pending:
    """What the cookie brought back."""

    state: str
    nonce: str
    verifier: str


@dataclass(slots=True)
class ProviderFlow:
    settings: OidcSettings
    secure: bool = True
    clock: Callable[[], float] = time.monotonic
    _discovery: dict[str, Any] = field(default_factory=dict)
    _fetched_at: float = float("-inf")
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def cookie_name(self) -> str:
        return COOKIE if self.secure else PLAIN_COOKIE

    async def discovery(self) -> dict[str, Any]:
        """The provider's discovery document, fetched at most hourly (FlowFailed when none can be had)."""
        async with self._lock:
            if self.clock() - self._fetched_at >= DISCOVERY_MAX_AGE_S:
                try:
                    self._discovery = await self._fetch_discovery()
                    self._fetched_at = self.clock()
                except (httpx2.HTTPError, ValueError) as exc:
                    log.warning("OpenID provider's discovery document: %s", _cut(str(exc)))
                    if not self._discovery:
                        raise FlowFailed("provider_unavailable", "the provider did not answer") from None
            return self._discovery

    async def _fetch_discovery(self) -> dict[str, Any]:
        issuer = self.settings.issuer
        url = issuer.rstrip("/") + DISCOVERY_PATH
        async with (
            httpx2.AsyncClient(timeout=TIMEOUT_S, follow_redirects=False) as client,
            client.stream("GET", url) as response,
        ):
            if response.status_code != 200:
                raise ValueError(f"HTTP {response.status_code} from {url}")
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_DOCUMENT_BYTES:
                    raise ValueError(f"a discovery document over {MAX_DOCUMENT_BYTES} bytes")
        document = _json_object(bytes(body))
        if document.get("issuer") != issuer:
            raise ValueError(f"the document's issuer is {_cut(str(document.get('issuer')))}, not {issuer}")
        for endpoint in ("authorization_endpoint", "token_endpoint"):
            if not _usable(document.get(endpoint), issuer):
                raise ValueError(f"its {endpoint} is not an https URL")
        return document

    def _client(self, discovery: dict[str, Any]) -> AsyncOAuth2Client:
        settings = self.settings
        methods = discovery.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
        if not settings.client_secret:
            method = "none"
        elif "client_secret_basic" in methods or "client_secret_post" not in methods:
            method = "client_secret_basic"
        else:
            method = "client_secret_post"
        return AsyncOAuth2Client(
            client_id=settings.client_id,
            client_secret=settings.client_secret or None,
            token_endpoint_auth_method=method,
            scope=SCOPE,
            redirect_uri=settings.redirect_uri,
            code_challenge_method="S256",
            timeout=TIMEOUT_S,
            follow_redirects=False,
        )

    async def start(self) -> Started:
        discovery = await self.discovery()
        state, nonce, verifier = (secrets.token_urlsafe(32) for _ in range(3))
        verifier += secrets.token_urlsafe(16)  # RFC 7636: 43 to 128 characters (64 here)
        async with self._client(discovery) as client:
            url, _ = client.create_authorization_url(
                discovery["authorization_endpoint"], state=state, code_verifier=verifier, nonce=nonce
            )
        return Started(str(url), f"{state}.{nonce}.{verifier}")

    def pending(self, cookie: str, state: str) -> Pending:
        """The cookie's values, if its state is the query's (FlowFailed `bad_state` otherwise: an old
        tab, a cookie expired, or a link someone else made)."""
        parts = cookie.split(".") if len(cookie) <= 512 else []
        if len(parts) != 3 or not all(parts):
            raise FlowFailed("bad_state", "no sign-in of this browser is pending (its cookie is gone)")
        kept = Pending(*parts)
        if not hmac.compare_digest(kept.state.encode(), state.encode()):
            raise FlowFailed("bad_state", "the provider answered a sign-in this browser did not start")
        return kept

    async def finish(self, code: str, kept: Pending) -> tuple[str, str]:
        """The ID token and access token the provider gives for `code` (FlowFailed `code_refused`)."""
        discovery = await self.discovery()
        try:
            async with self._client(discovery) as client:
                token = await client.fetch_token(
                    discovery["token_endpoint"],
                    grant_type="authorization_code",
                    code=code,
                    code_verifier=kept.verifier,
                )
        except (OAuthError, httpx2.HTTPError, ValueError, KeyError) as exc:
            log.warning("OpenID provider's token endpoint refused the code: %s", _cut(str(exc)))
            raise FlowFailed("code_refused", "the provider did not exchange the code") from None
        id_token, access_token = token.get("id_token"), token.get("access_token")
        if not isinstance(id_token, str) or not id_token or len(id_token) > MAX_ID_TOKEN_CHARS:
            raise FlowFailed("code_refused", "the provider's answer holds no usable ID token")
        if not isinstance(access_token, str) or len(access_token) > MAX_ACCESS_TOKEN_CHARS:
            access_token = ""  # only asked for the profile: its absence costs a display name
        return id_token, access_token


def shown_code(details: str) -> str:
    """A refusal's code as the page may show it: identity's `code: message`, else `provider_failed`."""
    code = details.partition(":")[0].strip()
    return code if CODE.fullmatch(code) else "provider_failed"


def query_value(value: str | None) -> str:
    return value if value is not None and len(value) <= MAX_PARAMETER_CHARS else ""


def _json_object(body: bytes) -> dict[str, Any]:
    document = json.loads(body)
    if not isinstance(document, dict):
        raise ValueError("not a JSON object")
    return document


def _usable(url: object, issuer: str) -> bool:
    """An endpoint: https, or http when the issuer is (loopback only, as the settings allow)."""
    if not isinstance(url, str):
        return False
    scheme = urllib.parse.urlsplit(url).scheme
    return scheme == "https" or (scheme == "http" and issuer.startswith("http://"))


def _cut(text: str) -> str:
    return repr(text if len(text) <= 120 else text[:120] + "…")
