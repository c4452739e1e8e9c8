"""Engine configuration: environment variables only, parsed once at start-up (STYLE.md 7.4)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rummy_service.auth import DEV_SECRET
from rummy_service.config import check_store_pair, env_int, env_str
from rummy_store.event_log import TOPIC

from rummy_engine.seeds import DEV_SEED_KEY


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """Where to listen and store, and the table defaults.

    Empty `kafka` and `redis` select the embedded store (sqlite files in `data_dir`); both set select
    Kafka (source of truth, and the single-writer fence) and Redis (snapshots, checkpoints).
    """

    address: str = "127.0.0.1:50051"
    advertised: str = ""  # where other engines send clients to reach this one ("" = the bound address)
    kafka: str = ""
    redis: str = ""
    topic: str = TOPIC
    key_prefix: str = ""
    partitions: int = 3
    data_dir: str = ".local/engine"
    snapshot_every: int = 50
    turn_timeout_ms: int = 30_000  # 0 = no turn timer
    away_after: int = 3  # timeouts in a row before a seat is marked away
    away_grace_ms: int = 1_000  # an away seat is auto-played after this, unless its player acts
    group: str = ""  # the engines' consumer group on the topic ("" = meldstream-engine.<topic>)
    store_timeout_s: float = 5.0  # bound on every Kafka and Redis call; a store down answers UNAVAILABLE
    token_secret: str = DEV_SECRET
    seed_key: str = DEV_SEED_KEY  # HMAC key deriving each game's seed (seeds.py); keep it secret and fixed
    workers: int = 32  # threads for blocking store calls
    tables: str = ""  # create games from TableFormed: Kafka topic, or embedded sqlite file ("" = off)
    max_games: int = 10_000  # loaded games beyond this are dropped, least recently used first
    idle_evict_ms: int = 600_000  # an unfinished game nobody used this long is dropped from memory
    finished_grace_ms: int = 60_000  # a finished game is dropped this long after its last use

    @property
    def embedded(self) -> bool:
        return not self.kafka

    @property
    def group_id(self) -> str:
        return self.group or f"meldstream-engine.{self.topic}"


def load(env: Mapping[str, str] | None = None) -> EngineConfig:
    """Read ENGINE_* (and KAFKA_BOOTSTRAP, REDIS_URL, MELDSTREAM_TOKEN_SECRET) from the environment."""
    d = EngineConfig()
    config = EngineConfig(
        address=env_str("ENGINE_ADDRESS", d.address, env),
        advertised=env_str("ENGINE_ADVERTISED_ADDRESS", d.advertised, env),
        kafka=env_str("KAFKA_BOOTSTRAP", d.kafka, env),
        redis=env_str("REDIS_URL", d.redis, env),
        topic=env_str("ENGINE_TOPIC", d.topic, env),
        key_prefix=env_str("ENGINE_KEY_PREFIX", d.key_prefix, env),
        partitions=env_int("ENGINE_PARTITIONS", d.partitions, env, minimum=1),
        data_dir=env_str("ENGINE_DATA_DIR", d.data_dir, env),
        snapshot_every=env_int("ENGINE_SNAPSHOT_EVERY", d.snapshot_every, env, minimum=1),
        turn_timeout_ms=env_int("ENGINE_TURN_TIMEOUT_MS", d.turn_timeout_ms, env),
        away_after=env_int("ENGINE_AWAY_AFTER", d.away_after, env, minimum=1),
        away_grace_ms=env_int("ENGINE_AWAY_GRACE_MS", d.away_grace_ms, env),
        group=env_str("ENGINE_GROUP", d.group, env),
        store_timeout_s=env_int("ENGINE_STORE_TIMEOUT_MS", int(d.store_timeout_s * 1000), env, minimum=100)
        / 1000,
        token_secret=env_str("MELDSTREAM_TOKEN_SECRET", d.token_secret, env),
        seed_key=env_str("ENGINE_SEED_KEY", d.seed_key, env),
        workers=env_int("ENGINE_WORKERS", d.workers, env, minimum=1),
        tables=env_str("ENGINE_TABLES", d.tables, env),
        max_games=env_int("ENGINE_MAX_GAMES", d.max_games, env, minimum=1),
        idle_evict_ms=env_int("ENGINE_IDLE_EVICT_MS", d.idle_evict_ms, env, minimum=1),
        finished_grace_ms=env_int("ENGINE_FINISHED_GRACE_MS", d.finished_grace_ms, env, minimum=1),
    )
    check_store_pair(config.kafka, config.redis)
    return config
