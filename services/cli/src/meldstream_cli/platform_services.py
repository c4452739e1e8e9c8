"""Matchmaking and scoring beside the engine in `meldstream run` (the hook `run.py` calls).

Matchmaking always runs: on the embedded store it publishes tables to a sqlite file next to the
engine's, on Kafka to `rummy.matchmaking.events.v1`; the engine creates games from it (`ENGINE_TABLES`).
Scoring needs Redis, so it runs only with `--kafka`/`--redis`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from rummy_engine.config import EngineConfig
from rummy_matchmaking import config as matchmaking_config
from rummy_matchmaking.service import RunningMatchmaking, start_matchmaking
from rummy_scoring import config as scoring_config
from rummy_scoring.service import RunningScoring, start_scoring


def matchmaking_dir(config: EngineConfig) -> Path:
    return Path(config.data_dir).parent / "matchmaking"


def with_tables(config: EngineConfig) -> EngineConfig:
    """The engine configuration, following matchmaking's tables unless ENGINE_TABLES names them."""
    if config.tables:
        return config
    if config.embedded:
        return replace(config, tables=str(matchmaking_dir(config) / "tables.sqlite"))
    return replace(config, tables=matchmaking_config.MATCHMAKING_TOPIC)


@dataclass(slots=True)
class PlatformServices:
    matchmaking: RunningMatchmaking
    scoring: RunningScoring | None = None
    lines: list[str] = field(default_factory=list)

    async def stop(self) -> None:
        await self.matchmaking.stop()
        if self.scoring is not None:
            await self.scoring.stop()


async def start_services(config: EngineConfig) -> PlatformServices:
    """Start matchmaking (and scoring on Kafka + Redis) for an engine configured by `with_tables`."""
    mm = replace(
        matchmaking_config.load(),
        kafka=config.kafka,
        topic=config.tables if not config.embedded else matchmaking_config.MATCHMAKING_TOPIC,
        data_dir=str(matchmaking_dir(config)),
        token_secret=config.token_secret,
    )
    services = PlatformServices(await start_matchmaking(mm))
    services.lines.append(f"meldstream matchmaking listening on {services.matchmaking.address}")
    if not config.embedded:
        sc = replace(
            scoring_config.ScoringConfig(),
            kafka=config.kafka,
            redis=config.redis,
            game_topic=config.topic,
            matchmaking_topic=config.tables,
            key_prefix=config.key_prefix,
        )
        services.scoring = await start_scoring(sc)
        services.lines.append(f"meldstream scoring listening on {services.scoring.address}")
    else:
        services.lines.append("  scoring: needs --kafka and --redis (Redis holds its results)")
    return services
