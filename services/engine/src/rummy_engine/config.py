"""Engine configuration: environment variables only, parsed once at start-up (STYLE.md 7.4)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Final

from rummy_service.config import (
    CONNECT_WAIT_VARIABLE,
    DEFAULT_CONNECT_WAIT_S,
    DEV_VARIABLE,
    SERVICE_CREDENTIAL_VARIABLE,
    STORE_VARIABLE,
    check_address,
    checked_replication,
    dev_mode,
    env_int,
    env_str,
    secret,
    store_location,
)
from rummy_service.preflight import Needs, store_needs
from rummy_service.public_keys import DEFAULT_IDENTITY, IDENTITY_VARIABLE
from rummy_service.rate_limits import LimitSettings, load_limits
from rummy_service.tls import PLAINTEXT, Tls, load_tls
from rummy_store.event_log import TOPIC
from rummy_store.fence_groups import DEFAULT_FENCE_GROUPS
from rummy_store.kafka_clients import KAFKA_PYTHON
from rummy_store.kafka_topic import Replication
from rummy_store.locations import StoreLocation
from rummy_store.partitioning import DEFAULT_PARTITIONS

from rummy_engine.seeds import DEV_SEED_KEY


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """Where to listen and store, and the table defaults.

    Empty `kafka` and `redis` select the embedded store (sqlite files in `data_dir`); both set select
    Kafka (source of truth, and the single-writer fence) and Redis (snapshots, checkpoints). `store`
    is the three as one location (`rummy_store.locations`), which opens them.
    """

    address: str = "127.0.0.1:50051"
    advertised: str = ""  # where other engines send clients to reach this one ("" = the bound address)
    kafka: str = ""
    redis: str = ""
    topic: str = TOPIC
    key_prefix: str = ""
    partitions: int = DEFAULT_PARTITIONS  # for a topic that is missing; an existing one keeps its count
    fence_groups: int = DEFAULT_FENCE_GROUPS  # for a topic that has none yet (fence_groups.py)
    replication_factor: int = 0  # of a topic created here: 0 = min(3, brokers)
    min_insync_replicas: int = 0  # of a topic created here: 0 = 2 from 3 replicas, else 1
    data_dir: str = ".local/engine"
    store_setting: str = field(default="", compare=False)  # the URL's setting (MELDSTREAM_STORE, --store)
    kafka_client: str = KAFKA_PYTHON  # the Kafka backend (KAFKA_CLIENT, or the URL's scheme)
    snapshot_every: int = 50
    turn_timeout_ms: int = 30_000  # 0 = no turn timer
    away_after: int = 3  # timeouts in a row before a seat is marked away
    away_grace_ms: int = 1_000  # an away seat is auto-played after this, unless its player acts
    # Disconnect protection (presence.py, meldstream M3): how long a seat whose player's last stream
    # closed keeps its place before its bank and automatic turns run (0 = presence not tracked; a
    # configuration built in code has it off, one from the environment DEFAULT_DISCONNECT_GRACE_MS),
    # and how many of its turns the engine plays after that before the seat forfeits.
    disconnect_grace_ms: int = 0
    forfeit_after_turns: int = 3
    time_bank_ms: int = 0  # each seat's time bank per game for a table that asks for none (0 = none)
    group: str = ""  # the engines' consumer group on the topic ("" = meldstream-engine.<topic>)
    store_timeout_ms: int = 5_000  # bound on every Kafka and Redis call; a store down answers UNAVAILABLE
    identity: str = DEFAULT_IDENTITY  # the identity service, whose public keys verify tokens
    service_credential: str = ""  # this engine's own credential at identity (to forward tables)
    seed_key: str = DEV_SEED_KEY  # HMAC key deriving each game's seed (seeds.py); keep it secret and fixed
    # How long a new game waits for its seats' own seeds before its first deal (seeds.py); 0 deals at
    # creation. A configuration built in code deals at once; from the environment, DEFAULT_SEED_WINDOW_MS.
    seed_window_ms: int = 0
    connect_wait_s: int = DEFAULT_CONNECT_WAIT_S  # at start, for Kafka and Redis to answer
    tls: Tls = PLAINTEXT  # certificate files (rummy_service.tls): TLS on the port, and to other engines
    limits: LimitSettings = field(default_factory=LimitSettings)  # calls per account and per address
    workers: int = 32  # threads for blocking store calls
    tables: str = ""  # create games from TableFormed: Kafka topic, or embedded sqlite file ("" = off)
    max_games: int = 10_000  # loaded games beyond this are dropped, least recently used first
    idle_evict_ms: int = 600_000  # an unfinished game nobody used this long is dropped from memory
    finished_grace_ms: int = 60_000  # a finished game is dropped this long after its last use
    max_watchers_per_game: int = 1_000  # spectator streams (WatchGame) of one game; more: too_many_watchers
    max_watchers: int = 10_000  # spectator streams of all the games of this engine
    stream_queue: int = 256  # updates a stream may fall behind before it is dropped (slow_reader)

    @property
    def store(self) -> StoreLocation:
        return StoreLocation(self.kafka, self.redis, self.data_dir, self.store_setting, self.kafka_client)

    @property
    def embedded(self) -> bool:
        return self.store.embedded

    @property
    def group_id(self) -> str:
        return self.group or f"meldstream-engine.{self.topic}"

    @property
    def replication(self) -> Replication:
        return Replication(self.replication_factor, self.min_insync_replicas)

    @property
    def store_timeout_s(self) -> float:
        return self.store_timeout_ms / 1000

    def needs(self) -> Needs:
        """What must answer before it starts (`rummy_service.preflight`)."""
        return store_needs(self.store, "ENGINE_DATA_DIR", self.connect_wait_s)

    def to_env(self) -> dict[str, str]:
        """The environment `load` reads back as this configuration (to start another engine process).

        A configuration with a development secret is development mode's, and says so (MELDSTREAM_DEV)."""
        env = {name: str(getattr(self, field)) for name, field, _ in _VARIABLES}
        env[STORE_VARIABLE] = ""  # the separate settings above name the store
        if self.seed_key == DEV_SEED_KEY:
            env[DEV_VARIABLE] = "1"
        return env | self.tls.to_env() | self.limits.to_env()


_VARIABLES: Final = (  # (environment variable, field, minimum for numbers)
    ("ENGINE_ADDRESS", "address", 0),
    ("ENGINE_ADVERTISED_ADDRESS", "advertised", 0),
    ("KAFKA_BOOTSTRAP", "kafka", 0),
    ("KAFKA_CLIENT", "kafka_client", 0),
    ("REDIS_URL", "redis", 0),
    ("ENGINE_TOPIC", "topic", 0),
    ("ENGINE_KEY_PREFIX", "key_prefix", 0),
    ("ENGINE_PARTITIONS", "partitions", 1),
    ("ENGINE_FENCE_GROUPS", "fence_groups", 1),
    ("KAFKA_REPLICATION_FACTOR", "replication_factor", 0),
    ("KAFKA_MIN_INSYNC_REPLICAS", "min_insync_replicas", 0),
    ("ENGINE_DATA_DIR", "data_dir", 0),
    ("ENGINE_SNAPSHOT_EVERY", "snapshot_every", 1),
    ("ENGINE_TURN_TIMEOUT_MS", "turn_timeout_ms", 0),
    ("ENGINE_AWAY_AFTER", "away_after", 1),
    ("ENGINE_AWAY_GRACE_MS", "away_grace_ms", 0),
    ("ENGINE_DISCONNECT_GRACE_MS", "disconnect_grace_ms", 0),
    ("ENGINE_FORFEIT_AFTER_TURNS", "forfeit_after_turns", 0),
    ("ENGINE_TIME_BANK_MS", "time_bank_ms", 0),
    ("ENGINE_GROUP", "group", 0),
    ("ENGINE_STORE_TIMEOUT_MS", "store_timeout_ms", 100),
    (IDENTITY_VARIABLE, "identity", 0),
    (SERVICE_CREDENTIAL_VARIABLE, "service_credential", 0),
    ("ENGINE_SEED_KEY", "seed_key", 0),
    ("ENGINE_SEED_WINDOW_MS", "seed_window_ms", 0),
    ("ENGINE_WORKERS", "workers", 1),
    ("ENGINE_TABLES", "tables", 0),
    ("ENGINE_MAX_GAMES", "max_games", 1),
    ("ENGINE_IDLE_EVICT_MS", "idle_evict_ms", 1),
    ("ENGINE_FINISHED_GRACE_MS", "finished_grace_ms", 1),
    ("ENGINE_MAX_WATCHERS_PER_GAME", "max_watchers_per_game", 0),
    ("ENGINE_MAX_WATCHERS", "max_watchers", 0),
    ("ENGINE_STREAM_QUEUE", "stream_queue", 1),
    (CONNECT_WAIT_VARIABLE, "connect_wait_s", 1),
)
DEFAULT_SEED_WINDOW_MS: Final = 2_500
"""The seed window of an engine started from the environment: time for every client's seed to arrive,
short enough that a table whose seats send none hardly notices."""
DEFAULT_DISCONNECT_GRACE_MS: Final = 30_000
"""The disconnect grace of an engine started from the environment (docs/operators/configuration.md)."""
_ENV_DEFAULTS: Final = {
    "seed_window_ms": DEFAULT_SEED_WINDOW_MS,
    "disconnect_grace_ms": DEFAULT_DISCONNECT_GRACE_MS,
}  # where the environment's differs
_SECRETS: Final = ("seed_key",)  # refused outside development mode when unset or public
_STORE: Final = (
    "kafka",
    "kafka_client",
    "redis",
    "data_dir",
)  # or MELDSTREAM_STORE (rummy_service.config.store_location)


def load(env: Mapping[str, str] | None = None, *, secrets: bool = True) -> EngineConfig:
    """Read ENGINE_* (and MELDSTREAM_STORE or KAFKA_BOOTSTRAP and REDIS_URL, IDENTITY_ADDRESS,
    MELDSTREAM_SERVICE_CREDENTIAL, MELDSTREAM_DEV, TLS_*) from the environment. `secrets=False`
    (replay, verify: they deal nothing) leaves the seed key at its development value unread."""
    d = EngineConfig()
    dev = dev_mode(env)
    values: dict[str, object] = {}
    for name, attr, minimum in _VARIABLES:
        default = _ENV_DEFAULTS.get(attr, getattr(d, attr))
        if attr in _SECRETS or attr in _STORE:
            continue  # secrets last: a store half set is the mistake to name first
        if isinstance(default, int):
            values[attr] = env_int(name, default, env, minimum=minimum)
        else:
            values[attr] = env_str(name, default, env)
    config = EngineConfig(**values, tls=load_tls(env), limits=load_limits(env))  # type: ignore[arg-type]
    check_address(config.address, "ENGINE_ADDRESS")
    if config.advertised:
        check_address(config.advertised, "ENGINE_ADVERTISED_ADDRESS")
    store = store_location("ENGINE_DATA_DIR", d.data_dir, env)
    config = replace(
        config,
        kafka=store.kafka,
        redis=store.redis,
        data_dir=store.directory or d.data_dir,
        store_setting=store.setting,
        kafka_client=store.client,
    )
    checked_replication(config.replication_factor, config.min_insync_replicas)
    if not secrets:
        return config
    return replace(config, seed_key=secret("ENGINE_SEED_KEY", DEV_SEED_KEY, env, dev=dev))
