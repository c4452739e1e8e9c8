"""Scoring configuration: environment variables only, parsed once at start-up (STYLE.md 7.4)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rummy_service.config import (
    DEFAULT_CONNECT_WAIT_S,
    ConfigError,
    address_setting,
    connect_wait_s,
    env_int,
    env_str,
    kafka_replication,
    store_location,
)
from rummy_service.preflight import Needs, store_needs
from rummy_service.rate_limits import LimitSettings, load_limits
from rummy_service.tls import PLAINTEXT, Tls, load_tls
from rummy_store.event_log import TOPIC
from rummy_store.kafka_clients import KAFKA_PYTHON
from rummy_store.kafka_topic import FROM_CLUSTER, Replication
from rummy_store.locations import StoreLocation
from rummy_store.partitioning import DEFAULT_PARTITIONS

SCORING_TOPIC = "rummy.scoring.events.v1"
MATCHMAKING_TOPIC = "rummy.matchmaking.events.v1"
GAMES_FILE = "events.sqlite"  # the engine's log, in an embedded store's directory
TABLES_FILE = "tables.sqlite"  # matchmaking's journal, in an embedded store's directory


@dataclass(frozen=True, slots=True)
class ScoringConfig:
    """Where to listen, what to read and write: Kafka + Redis, or neither for the embedded store.

    Embedded, the store and scoring's topic are sqlite files in `data_dir`, and the games and tables
    are read from the engine's and matchmaking's sqlite logs (`game_file`, `tables_file`). `store` is
    the first three as one location (`rummy_store.locations`), which opens them.
    """

    address: str = "127.0.0.1:50053"
    kafka: str = ""
    redis: str = ""
    data_dir: str = ".local/scoring"
    store_setting: str = field(default="", compare=False)  # the URL's setting (MELDSTREAM_STORE)
    kafka_client: str = KAFKA_PYTHON  # the Kafka backend (KAFKA_CLIENT, or the URL's scheme)
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
    limits: LimitSettings = field(default_factory=LimitSettings)
    legacy_ids: dict[str, str] = field(
        default_factory=dict
    )  # a player id of before accounts -> account id  # calls per address (its reads are public)

    @property
    def store(self) -> StoreLocation:
        return StoreLocation(self.kafka, self.redis, self.data_dir, self.store_setting, self.kafka_client)

    @property
    def embedded(self) -> bool:
        return self.store.embedded

    def needs(self) -> Needs:
        """What must answer before it starts (`rummy_service.preflight`)."""
        return store_needs(self.store, "SCORING_DATA_DIR", self.connect_wait_s)


def legacy_ids(path: str) -> dict[str, str]:
    """SCORING_LEGACY_IDS: a JSON file {player id of before accounts: account id}, from
    `meldstream accounts legacy-map` ("" = none)."""
    if not path:
        return {}
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"SCORING_LEGACY_IDS={path!r} is not a readable JSON file: {exc}") from None
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        raise ConfigError(f"SCORING_LEGACY_IDS={path!r} is not an object of player ids to account ids")
    return data


def load(env: Mapping[str, str] | None = None) -> ScoringConfig:
    """Read SCORING_* (and MELDSTREAM_STORE or KAFKA_BOOTSTRAP and REDIS_URL, KAFKA_REPLICATION_FACTOR,
    KAFKA_MIN_INSYNC_REPLICAS, ENGINE_TOPIC, MATCHMAKING_TOPIC, TLS_*).

    MELDSTREAM_STORE's directory holds the engine's and matchmaking's logs too, so those are read
    unless SCORING_GAME_FILE and SCORING_TABLES_FILE name others."""
    d = ScoringConfig()
    address = address_setting("SCORING_ADDRESS", d.address, env)
    store = store_location("SCORING_DATA_DIR", d.data_dir, env)
    games, tables = d.game_file, d.tables_file
    if store.setting and store.embedded:
        games, tables = str(Path(store.directory) / GAMES_FILE), str(Path(store.directory) / TABLES_FILE)
    return ScoringConfig(
        address=address,
        kafka=store.kafka,
        redis=store.redis,
        data_dir=store.directory or d.data_dir,
        store_setting=store.setting,
        kafka_client=store.client,
        game_file=env_str("SCORING_GAME_FILE", games, env),
        tables_file=env_str("SCORING_TABLES_FILE", tables, env),
        game_topic=env_str("ENGINE_TOPIC", d.game_topic, env),
        matchmaking_topic=env_str("MATCHMAKING_TOPIC", d.matchmaking_topic, env),
        topic=env_str("SCORING_TOPIC", d.topic, env),
        key_prefix=env_str("SCORING_KEY_PREFIX", d.key_prefix, env),
        group=env_str("SCORING_GROUP", d.group, env),
        partitions=env_int("SCORING_PARTITIONS", d.partitions, env, minimum=1),
        replication=kafka_replication(env),
        connect_wait_s=connect_wait_s(env),
        tls=load_tls(env),
        limits=load_limits(env),
        legacy_ids=legacy_ids(env_str("SCORING_LEGACY_IDS", "", env)),
    )
