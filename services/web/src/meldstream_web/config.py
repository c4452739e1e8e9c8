"""The gateway's settings, from the environment (WEB_*, and the addresses `meldstream run` uses)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rummy_service.auth import DEFAULT_TTL_S, DEV_SECRET
from rummy_service.config import ConfigError, address_setting, dev_mode, env_int, secret, token_ttl_s
from rummy_service.preflight import Needs
from rummy_service.tls import PLAINTEXT, Tls, load_tls

DEFAULT_ADDRESS = "127.0.0.1:8080"


@dataclass(frozen=True, slots=True)
class WebConfig:
    """Where the gateway listens, the services it bridges to, and how its bots play.

    `bot_pace_ms` is how long a bot the gateway seats (quick play) waits before each move, so a person
    at the table sees each move happen; 0 plays at once (tests)."""

    address: str = DEFAULT_ADDRESS
    engine: str = "127.0.0.1:50051"
    matchmaking: str = "127.0.0.1:50052"
    scoring: str = "127.0.0.1:50053"
    token_secret: str = DEV_SECRET  # load refuses it outside development mode (MELDSTREAM_DEV=1)
    token_ttl_s: int = DEFAULT_TTL_S  # lifetime of the tokens it signs players in with
    bot_pace_ms: int = 700
    tls: Tls = PLAINTEXT  # TLS_CA_FILE: the services are called over TLS

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
    def url(self) -> str:
        host, port = self.host_port
        return f"http://{host}:{port}"


def load(env: Mapping[str, str] | None = None) -> WebConfig:
    """Read WEB_ADDRESS, WEB_BOT_PACE_MS, the services' addresses, MELDSTREAM_TOKEN_SECRET,
    MELDSTREAM_TOKEN_TTL_S, MELDSTREAM_DEV and TLS_*."""
    d = WebConfig()
    return WebConfig(
        address=address_setting("WEB_ADDRESS", d.address, env),
        engine=address_setting("ENGINE_ADDRESS", d.engine, env),
        matchmaking=address_setting("MATCHMAKING_ADDRESS", d.matchmaking, env),
        scoring=address_setting("SCORING_ADDRESS", d.scoring, env),
        token_secret=secret("MELDSTREAM_TOKEN_SECRET", DEV_SECRET, env, dev=dev_mode(env)),
        token_ttl_s=token_ttl_s(env),
        bot_pace_ms=env_int("WEB_BOT_PACE_MS", d.bot_pace_ms, env),
        tls=load_tls(env),
    )
