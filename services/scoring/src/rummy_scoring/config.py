"""Scoring configuration: environment variables only, parsed once at start-up (STYLE.md 7.4)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rummy_service.config import ConfigError, env_int, env_str
from rummy_store.event_log import TOPIC

SCORING_TOPIC = "rummy.scoring.events.v1"
MATCHMAKING_TOPIC = "rummy.matchmaking.events.v1"


@dataclass(frozen=True, slots=True)
class ScoringConfig:
    """Where to listen, what to read and write. Scoring needs Kafka and Redis (no embedded store)."""

    address: str = "127.0.0.1:50053"
    kafka: str = ""
    redis: str = ""
    game_topic: str = TOPIC
    matchmaking_topic: str = MATCHMAKING_TOPIC
    topic: str = SCORING_TOPIC
    key_prefix: str = ""
    group: str = "rummy-scoring"
    partitions: int = 3


def load(env: Mapping[str, str] | None = None) -> ScoringConfig:
    """Read SCORING_* (and KAFKA_BOOTSTRAP, REDIS_URL, ENGINE_TOPIC, MATCHMAKING_TOPIC)."""
    d = ScoringConfig()
    config = ScoringConfig(
        address=env_str("SCORING_ADDRESS", d.address, env),
        kafka=env_str("KAFKA_BOOTSTRAP", d.kafka, env),
        redis=env_str("REDIS_URL", d.redis, env),
        game_topic=env_str("ENGINE_TOPIC", d.game_topic, env),
        matchmaking_topic=env_str("MATCHMAKING_TOPIC", d.matchmaking_topic, env),
        topic=env_str("SCORING_TOPIC", d.topic, env),
        key_prefix=env_str("SCORING_KEY_PREFIX", d.key_prefix, env),
        group=env_str("SCORING_GROUP", d.group, env),
        partitions=env_int("SCORING_PARTITIONS", d.partitions, env, minimum=1),
    )
    if not config.kafka or not config.redis:
        raise ConfigError("scoring needs KAFKA_BOOTSTRAP and REDIS_URL")
    return config
