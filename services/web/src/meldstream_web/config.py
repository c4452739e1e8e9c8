"""The gateway's settings, from the environment (WEB_*, and the addresses `meldstream run` uses)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rummy_service.auth import DEV_SECRET
from rummy_service.config import ConfigError, env_int, env_str

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
    token_secret: str = DEV_SECRET
    bot_pace_ms: int = 700

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
    d = WebConfig()
    return WebConfig(
        address=env_str("WEB_ADDRESS", d.address, env),
        engine=env_str("ENGINE_ADDRESS", d.engine, env),
        matchmaking=env_str("MATCHMAKING_ADDRESS", d.matchmaking, env),
        scoring=env_str("SCORING_ADDRESS", d.scoring, env),
        token_secret=env_str("MELDSTREAM_TOKEN_SECRET", d.token_secret, env),
        bot_pace_ms=env_int("WEB_BOT_PACE_MS", d.bot_pace_ms, env),
    )
