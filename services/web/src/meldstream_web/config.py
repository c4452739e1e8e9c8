"""The gateway's settings, from the environment (WEB_*, and the addresses `meldstream run` uses)."""

from __future__ import annotations

import dataclasses
import ipaddress
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field

from rummy_service.config import (
    SERVICE_CREDENTIAL_VARIABLE,
    ConfigError,
    address_setting,
    env_int,
    env_str,
    redis_url,
)
from rummy_service.preflight import Needs
from rummy_service.public_keys import DEFAULT_IDENTITY, IDENTITY_VARIABLE
from rummy_service.rate_limits import LimitSettings, load_limits
from rummy_service.tls import PLAINTEXT, Tls, load_tls

from meldstream_web.chat_config import ChatSettings, load_chat
from meldstream_web.oidc import OidcSettings

DEFAULT_ADDRESS = "127.0.0.1:8080"
CALLBACK_PATH = "/api/oidc/callback"
OIDC_ISSUER = "WEB_OIDC_ISSUER"
PUBLIC_URL = "WEB_PUBLIC_URL"
CORS_ORIGINS = "WEB_CORS_ORIGINS"


@dataclass(frozen=True, slots=True)
class WebConfig:
    """Where the gateway listens, the services it bridges to, and how its bots play.

    `bot_pace_ms` is how long a bot the gateway seats (quick play) waits before each move, so a person
    at the table sees each move happen; 0 plays at once (tests)."""

    address: str = DEFAULT_ADDRESS
    engine: str = "127.0.0.1:50051"
    matchmaking: str = "127.0.0.1:50052"
    scoring: str = "127.0.0.1:50053"
    identity: str = DEFAULT_IDENTITY  # signs people in; its public keys verify their tokens
    service_credential: str = ""  # the gateway's own credential at identity: its quick-play bots
    cookie_secure: bool = True  # session cookies only over https (and http://localhost, which browsers trust)
    redis: str = ""  # where its replicas count calls together and hand bots over (none: each alone)
    key_prefix: str = ""  # WEB_KEY_PREFIX: before its keys in Redis (several platforms on one Redis)
    limits: LimitSettings = field(default_factory=LimitSettings)
    bot_pace_ms: int = 700
    tls: Tls = PLAINTEXT  # TLS_CA_FILE: the services are called over TLS
    oidc: OidcSettings = field(default_factory=OidcSettings)  # the operator's OpenID provider, if any
    public_url: str = ""  # WEB_PUBLIC_URL: the origin browsers load the page from (https://play.example.org)
    cors_origins: tuple[str, ...] = ()  # WEB_CORS_ORIGINS: other sites' pages that may call the bot API
    chat: ChatSettings = field(default_factory=ChatSettings)  # WEB_CHAT_*, and the store its lines are on

    def needs(self) -> Needs:
        """Nothing to wait for: the services it bridges to are called when a browser asks."""
        return Needs()

    @property
    def host_port(self) -> tuple[str, int]:
        host, _, port = self.address.rpartition(":")
        if not host or not port.isdigit():
            raise ConfigError(f"WEB_ADDRESS={self.address!r} is not host:port")
        return host, int(port)

    @property
    def public_origin(self) -> str:
        """WEB_PUBLIC_URL as a browser's `Origin` header spells it ("" when unset)."""
        return _origin(self.public_url) if self.public_url else ""

    @property
    def url(self) -> str:
        host, port = self.host_port
        return f"http://{host}:{port}"


def load(env: Mapping[str, str] | None = None) -> WebConfig:
    """Read WEB_ADDRESS, WEB_PUBLIC_URL, WEB_BOT_PACE_MS, WEB_COOKIE_SECURE, the services' addresses
    (IDENTITY_ADDRESS among them), MELDSTREAM_SERVICE_CREDENTIAL, WEB_OIDC_*, WEB_CORS_ORIGINS and TLS_*."""
    d = WebConfig()
    public_url = public_url_setting(env)
    config = WebConfig(
        public_url=public_url,
        address=address_setting("WEB_ADDRESS", d.address, env),
        engine=address_setting("ENGINE_ADDRESS", d.engine, env),
        matchmaking=address_setting("MATCHMAKING_ADDRESS", d.matchmaking, env),
        scoring=address_setting("SCORING_ADDRESS", d.scoring, env),
        identity=address_setting(IDENTITY_VARIABLE, d.identity, env),
        service_credential=env_str(SERVICE_CREDENTIAL_VARIABLE, "", env),
        cookie_secure=_cookie_secure(public_url, env),
        redis=redis_url("REDIS_URL", env),
        key_prefix=env_str("WEB_KEY_PREFIX", "", env),
        limits=load_limits(env),
        bot_pace_ms=env_int("WEB_BOT_PACE_MS", d.bot_pace_ms, env),
        tls=load_tls(env),
        cors_origins=cors_origins_setting(env),
        chat=load_chat(env),
    )
    return dataclasses.replace(config, oidc=_oidc(env, config))


def _oidc(env: Mapping[str, str] | None, config: WebConfig) -> OidcSettings:
    """WEB_OIDC_ISSUER (empty: no provider), WEB_OIDC_CLIENT_ID, WEB_OIDC_CLIENT_SECRET, WEB_OIDC_REDIRECT_URI
    and WEB_OIDC_NAME."""
    issuer = env_str(OIDC_ISSUER, "", env)
    client_id = env_str("WEB_OIDC_CLIENT_ID", "", env)
    if not issuer:
        if client_id:
            raise ConfigError(f"WEB_OIDC_CLIENT_ID is set without {OIDC_ISSUER}")
        return OidcSettings()
    _check_url(issuer, OIDC_ISSUER)
    if not client_id:
        raise ConfigError(f"{OIDC_ISSUER} is set without WEB_OIDC_CLIENT_ID (this gateway's client id there)")
    redirect = env_str("WEB_OIDC_REDIRECT_URI", "", env) or _default_redirect(config)
    _check_url(redirect, "WEB_OIDC_REDIRECT_URI")
    host = urllib.parse.urlsplit(issuer).hostname or issuer
    name = env_str("WEB_OIDC_NAME", "", env).strip() or host
    if len(name) > 40 or not name.isprintable():
        raise ConfigError("WEB_OIDC_NAME is printable text of at most 40 characters")
    return OidcSettings(issuer, client_id, env_str("WEB_OIDC_CLIENT_SECRET", "", env), redirect, name)


def public_url_setting(env: Mapping[str, str] | None = None) -> str:
    """WEB_PUBLIC_URL: an origin (scheme, host, optional port; https, or http on loopback), with no
    path, query or fragment; "" when unset. Anything else is refused with one line."""
    raw = env_str(PUBLIC_URL, "", env).strip()
    if not raw:
        return ""
    _check_url(raw, PUBLIC_URL)
    parsed = urllib.parse.urlsplit(raw)
    if parsed.path not in ("", "/") or parsed.query or parsed.username or parsed.password:
        raise ConfigError(
            f"{PUBLIC_URL}={raw[:80]!r} is an origin only (https://play.example.org): no path, query or user"
        )
    try:
        parsed.port  # noqa: B018 (a port that is not a number raises here)
    except ValueError:
        raise ConfigError(f"{PUBLIC_URL}={raw[:80]!r} has a port that is not a number") from None
    return raw.rstrip("/")


def cors_origins_setting(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """WEB_CORS_ORIGINS: origins (`https://bots.example.org`, comma-separated) whose pages may call the
    bot API, or `*` for any; empty: none. Anything but an origin stops the gateway with one line."""
    raw = env_str(CORS_ORIGINS, "", env).strip()
    if raw == "*":
        return ("*",)
    origins = []
    for item in filter(None, (part.strip() for part in raw.split(","))):
        parsed = urllib.parse.urlsplit(item)
        if parsed.scheme not in ("https", "http") or not parsed.hostname or parsed.path not in ("", "/"):
            raise ConfigError(f"{CORS_ORIGINS}: {item[:80]!r} is not an origin (https://bots.example.org)")
        if parsed.query or parsed.fragment or parsed.username or parsed.password:
            raise ConfigError(f"{CORS_ORIGINS}: {item[:80]!r} is an origin only: no query or user")
        try:
            origins.append(_origin(item))
        except ValueError:
            raise ConfigError(f"{CORS_ORIGINS}: {item[:80]!r} has a port that is not a number") from None
    return tuple(origins)


def _origin(url: str) -> str:
    """scheme://host[:port] as browsers send it: lowercase, no default port."""
    parsed = urllib.parse.urlsplit(url)
    scheme, host, port = parsed.scheme.lower(), (parsed.hostname or "").lower(), parsed.port
    if ":" in host:
        host = f"[{host}]"
    default = {"https": 443, "http": 80}[scheme]
    return f"{scheme}://{host}" if port in (None, default) else f"{scheme}://{host}:{port}"


def _cookie_secure(public_url: str, env: Mapping[str, str] | None) -> bool:
    """Secure cookies, always with an https public URL (WEB_COOKIE_SECURE=0 there is refused);
    otherwise WEB_COOKIE_SECURE (default 1)."""
    secure = env_int("WEB_COOKIE_SECURE", 1, env) != 0
    if public_url.lower().startswith("https:") and not secure:
        raise ConfigError(f"WEB_COOKIE_SECURE=0 with an https {PUBLIC_URL}: its cookies are Secure")
    return secure


def _default_redirect(config: WebConfig) -> str:
    """The provider's redirect URI when WEB_OIDC_REDIRECT_URI is unset: WEB_PUBLIC_URL's callback, or
    WEB_ADDRESS's on loopback (development); a gateway listening on any other address needs one."""
    if config.public_url:
        return config.public_origin + CALLBACK_PATH
    host, _ = config.host_port
    if not _loopback(host):
        raise ConfigError(
            f"{OIDC_ISSUER} needs {PUBLIC_URL} (or WEB_OIDC_REDIRECT_URI): the provider sends browsers back "
            f"to the public URL, not to WEB_ADDRESS={config.address}"
        )
    return config.url + CALLBACK_PATH


def check_oidc(config: WebConfig) -> None:
    """A provider needs the gateway's service credential: only `service:web` hands identity an ID token
    (checked when the gateway starts, after `meldstream run` gave it the credential of its own)."""
    if config.oidc.configured and not config.service_credential:
        raise ConfigError(
            f"{OIDC_ISSUER} needs {SERVICE_CREDENTIAL_VARIABLE}: the gateway's credential signs people in "
            "with the provider's ID tokens at identity"
        )


def _check_url(url: str, variable: str) -> None:
    """https (http only to this machine's loopback: development and tests), a host, no fragment."""
    parsed = urllib.parse.urlsplit(url)
    host = parsed.hostname or ""
    if parsed.scheme not in ("https", "http") or not host or parsed.fragment or any(c.isspace() for c in url):
        raise ConfigError(f"{variable}={url[:80]!r} is not an https URL")
    if parsed.scheme == "http" and not _loopback(host):
        raise ConfigError(f"{variable}={url[:80]!r}: https is required (plain http only on loopback)")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
