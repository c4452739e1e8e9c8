"""Scoring configuration: environment variables only, parsed once at start-up (STYLE.md 7.4)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rummy_service.config import (
    DEFAULT_CONNECT_WAIT_S,
    address_setting,
    check_store_pair,
    connect_wait_s,
    env_int,
    env_str,
    kafka_replication,
    redis_url,
)
from rummy_service.preflight import Needs
from rummy_service.tls import PLAINTEXT, Tls, load_tls
from rummy_store.event_log import TOPIC
from rummy_store.kafka_topic import FROM_CLUSTER, Replication
from rummy_store.partitioning import DEFAULT_PARTITIONS

SCORING_TOPIC = "rummy.scoring.events.v1"
MATCHMAKING_TOPIC = "rummy.matchmaking.events.v1"


@dataclass(frozen=True, slots=True)
class ScoringConfig:
    """Where to listen, what to read and write: Kafka + Redis, or neither for the embedded store.

    Embedded, the store and scoring's topic are sqlite files in `data_dir`, and the games and tables
    are read from the engine's and matchmaking's sqlite logs (`game_file`, `tables_file`).
    """

    address: str = "127.0.0.1:50053"
    kafka: str = ""
    redis: str = ""
    data_dir: str = ".local/scoring"
    game_file: str = ".local/engine/events.sqlite"
    tables_file: str = ".local/matchmaking/tables.sqlite"
    game_topic: str = TOPIC
    matchmaking_topic: str = MATCHMAKING_TOPIC
    topic: str = SCORING_TOPIC
    key_prefix: str = ""
    group: str = "rummy-scoring"
    partitions: int = DEFAULT_PARTITIONS  # for topics that are missing; existing ones keep their count
    replication: Replication = FROM_CLUSTER  # of topics created here
    connect_wait_s: int = DEFAULT_CONNECT_WAIT_S  # at start, for Kafka and Redis to answer
    tls: Tls = PLAINTEXT  # certificate files (rummy_service.tls): TLS on the port

    @property
    def embedded(self) -> bool:
        return not self.kafka

    def needs(self) -> Needs:
        """What must answer before it starts (`rummy_service.preflight`)."""
        data = (("SCORING_DATA_DIR", self.data_dir),) if self.embedded else ()
        return Needs(self.kafka, self.redis, data, self.connect_wait_s)


def load(env: Mapping[str, str] | None = None) -> ScoringConfig:
    """Read SCORING_* (and KAFKA_BOOTSTRAP, KAFKA_REPLICATION_FACTOR, KAFKA_MIN_INSYNC_REPLICAS,
    REDIS_URL, ENGINE_TOPIC, MATCHMAKING_TOPIC, TLS_*)."""
    d = ScoringConfig()
    config = ScoringConfig(
        address=address_setting("SCORING_ADDRESS", d.address, env),
        kafka=env_str("KAFKA_BOOTSTRAP", d.kafka, env),
        redis=redis_url("REDIS_URL", env),
        data_dir=env_str("SCORING_DATA_DIR", d.data_dir, env),
        game_file=env_str("SCORING_GAME_FILE", d.game_file, env),
        tables_file=env_str("SCORING_TABLES_FILE", d.tables_file, env),
        game_topic=env_str("ENGINE_TOPIC", d.game_topic, env),
        matchmaking_topic=env_str("MATCHMAKING_TOPIC", d.matchmaking_topic, env),
        topic=env_str("SCORING_TOPIC", d.topic, env),
        key_prefix=env_str("SCORING_KEY_PREFIX", d.key_prefix, env),
        group=env_str("SCORING_GROUP", d.group, env),
        partitions=env_int("SCORING_PARTITIONS", d.partitions, env, minimum=1),
        replication=kafka_replication(env),
        connect_wait_s=connect_wait_s(env),
        tls=load_tls(env),
    )
    check_store_pair(config.kafka, config.redis)
    return config
