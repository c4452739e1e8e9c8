"""Matchmaking configuration: environment variables only, parsed once at start-up (STYLE.md 7.4)."""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rummy_service.config import (
    DEFAULT_CONNECT_WAIT_S,
    ConfigError,
    address_setting,
    check_address,
    connect_wait_s,
    dev_mode,
    env_int,
    env_str,
    kafka_replication,
    secret,
    store_location,
)
from rummy_service.preflight import Needs, store_needs
from rummy_service.public_keys import DEFAULT_IDENTITY, IDENTITY_VARIABLE
from rummy_service.rate_limits import LimitSettings, load_limits
from rummy_service.tls import PLAINTEXT, Tls, load_tls
from rummy_store.kafka_clients import KAFKA_PYTHON
from rummy_store.kafka_topic import FROM_CLUSTER, Replication
from rummy_store.locations import StoreLocation
from rummy_store.partitioning import DEFAULT_PARTITIONS

from rummy_matchmaking.pairing import PairingRules
from rummy_matchmaking.private_tables import INVITE_TTL_S, KEEP_S

MATCHMAKING_TOPIC = "rummy.matchmaking.events.v1"
SCORING_TOPIC = "rummy.scoring.events.v1"
SCORES_FILE = "scores.sqlite"  # scoring's log, in an embedded store's directory
FORWARD_SECRET_VARIABLE = "MATCHMAKING_FORWARD_SECRET"
DEV_FORWARD_SECRET = "meldstream-development-matchmaking-forward-secret"  # development mode only


@dataclass(frozen=True, slots=True)
class MatchmakingConfig:
    """Where to listen and publish. Empty `kafka` selects the embedded log (a sqlite file in `data_dir`).

    On Kafka the instances of one `group` share the topic's partitions; `redis` holds the directory of
    which instance owns which partition, through which a call reaching another instance is forwarded
    (without it each instance serves only its own partitions' calls, enough for one instance).
    """

    address: str = "127.0.0.1:50052"
    advertised: str = ""  # where other instances forward calls to this one ("" = the bound address)
    kafka: str = ""
    redis: str = ""
    group: str = ""  # the instances' consumer group on the topic ("" = meldstream-matchmaking.<topic>)
    topic: str = MATCHMAKING_TOPIC
    scoring_topic: str = SCORING_TOPIC
    scoring_file: str = ""  # embedded: scoring's sqlite log, for ratings and results ("" = none)
    key_prefix: str = ""
    partitions: int = DEFAULT_PARTITIONS  # for a topic that is missing; an existing one keeps its count
    replication: Replication = FROM_CLUSTER  # of topics created here
    data_dir: str = ".local/matchmaking"
    store_setting: str = field(default="", compare=False)  # the URL's setting (MELDSTREAM_STORE)
    kafka_client: str = KAFKA_PYTHON  # the Kafka backend (KAFKA_CLIENT, or the URL's scheme)
    pairing_interval_ms: int = 100
    pairing: dict[str, PairingRules] = field(default_factory=dict)
    options: dict[str, dict[str, int | bool | str]] = field(default_factory=dict)  # per variant
    turn_timeout_ms: int = 0  # turn limit of queue tables (0 = the engine's default)
    invite_ttl_s: int = int(INVITE_TTL_S)  # a private table's invite, unless its game has started
    table_keep_s: int = int(KEEP_S)  # a started private table, after its latest game began
    humans_only: frozenset[str] = frozenset()  # variants whose casual queues refuse bots too ("*": all)
    identity: str = DEFAULT_IDENTITY  # the identity service, whose public keys verify tokens
    connect_wait_s: int = DEFAULT_CONNECT_WAIT_S  # at start, for Kafka and Redis to answer
    tls: Tls = PLAINTEXT  # certificate files (rummy_service.tls): TLS on the port, and to its peers
    limits: LimitSettings = field(default_factory=LimitSettings)  # calls per account and per address
    # The instances' key for marking calls forwarded to each other (`rummy_service.forwarding`).
    forward_secret: str = field(default=DEV_FORWARD_SECRET, repr=False)

    @property
    def store(self) -> StoreLocation:
        return StoreLocation(self.kafka, self.redis, self.data_dir, self.store_setting, self.kafka_client)

    @property
    def embedded(self) -> bool:
        return self.store.embedded

    def needs(self) -> Needs:
        """What must answer before it starts (`rummy_service.preflight`)."""
        return store_needs(self.store, "MATCHMAKING_DATA_DIR", self.connect_wait_s)

    @property
    def group_id(self) -> str:
        return self.group or f"meldstream-matchmaking.{self.topic}"


def forward_secret(redis: str, env: Mapping[str, str] | None = None) -> str:
    """MATCHMAKING_FORWARD_SECRET, which the instances sign forwarded calls with. Needed with Redis
    (the owners directory: calls are forwarded between instances), where it is required outside
    development mode; without Redis nothing is forwarded, so an unset one is a random key no call
    can carry (never the public development value, which would let clients forge forwarded calls)."""
    if redis or env_str(FORWARD_SECRET_VARIABLE, "", env):
        return secret(FORWARD_SECRET_VARIABLE, DEV_FORWARD_SECRET, env, dev=dev_mode(env))
    return secrets.token_hex(32)


def _pairing(raw: str) -> dict[str, PairingRules]:
    """MATCHMAKING_PAIRING: JSON {variant: {base_window, widen_per_s, max_window, fill_after_s}}."""
    if not raw:
        return {}
    try:
        data = json.loads(raw)
        return {
            variant: PairingRules(**{k: float(v) for k, v in rules.items()})
            for variant, rules in data.items()
        }
    except (ValueError, TypeError, AttributeError) as exc:
        raise ConfigError(f"MATCHMAKING_PAIRING is not valid pairing JSON: {exc}") from None


def _options(raw: str) -> dict[str, dict[str, int | bool | str]]:
    """MATCHMAKING_OPTIONS: JSON {variant: {option: value}} for queue tables (e.g. a kalooki prize_pool)."""
    if not raw:
        return {}
    try:
        data = json.loads(raw)
        return {str(variant): {str(k): v for k, v in options.items()} for variant, options in data.items()}
    except (ValueError, AttributeError) as exc:
        raise ConfigError(f"MATCHMAKING_OPTIONS is not valid JSON of options per variant: {exc}") from None


def load(env: Mapping[str, str] | None = None) -> MatchmakingConfig:
    """Read MATCHMAKING_* (and MELDSTREAM_STORE or KAFKA_BOOTSTRAP and REDIS_URL, KAFKA_REPLICATION_FACTOR,
    KAFKA_MIN_INSYNC_REPLICAS, SCORING_TOPIC, IDENTITY_ADDRESS, TLS_*, MATCHMAKING_FORWARD_SECRET and
    MELDSTREAM_DEV).

    On Kafka, Redis is optional (the owners directory); MELDSTREAM_STORE's directory holds scoring's
    log too, so that one is followed unless MATCHMAKING_SCORING_FILE names another."""
    d = MatchmakingConfig()
    address = address_setting("MATCHMAKING_ADDRESS", d.address, env)
    store = store_location("MATCHMAKING_DATA_DIR", d.data_dir, env, redis_required=False)
    scores = str(Path(store.directory) / SCORES_FILE) if store.setting and store.embedded else d.scoring_file
    config = MatchmakingConfig(
        address=address,
        advertised=env_str("MATCHMAKING_ADVERTISED_ADDRESS", d.advertised, env),
        kafka=store.kafka,
        redis=store.redis,
        group=env_str("MATCHMAKING_GROUP", d.group, env),
        topic=env_str("MATCHMAKING_TOPIC", d.topic, env),
        scoring_topic=env_str("SCORING_TOPIC", d.scoring_topic, env),
        scoring_file=env_str("MATCHMAKING_SCORING_FILE", scores, env),
        key_prefix=env_str("MATCHMAKING_KEY_PREFIX", d.key_prefix, env),
        partitions=env_int("MATCHMAKING_PARTITIONS", d.partitions, env, minimum=1),
        replication=kafka_replication(env),
        data_dir=store.directory or d.data_dir,
        store_setting=store.setting,
        kafka_client=store.client,
        pairing_interval_ms=env_int("MATCHMAKING_PAIRING_INTERVAL_MS", d.pairing_interval_ms, env, minimum=1),
        pairing=_pairing(env_str("MATCHMAKING_PAIRING", "", env)),
        options=_options(env_str("MATCHMAKING_OPTIONS", "", env)),
        turn_timeout_ms=env_int("MATCHMAKING_TURN_TIMEOUT_MS", d.turn_timeout_ms, env),
        invite_ttl_s=env_int("MATCHMAKING_INVITE_TTL_S", d.invite_ttl_s, env, minimum=1),
        table_keep_s=env_int("MATCHMAKING_TABLE_KEEP_S", d.table_keep_s, env, minimum=1),
        humans_only=frozenset(
            v.strip() for v in env_str("MATCHMAKING_HUMANS_ONLY", "", env).split(",") if v.strip()
        ),
        identity=address_setting(IDENTITY_VARIABLE, d.identity, env),
        connect_wait_s=connect_wait_s(env),
        tls=load_tls(env),
        limits=load_limits(env),
        forward_secret=forward_secret(store.redis, env),
    )
    if config.advertised:
        check_address(config.advertised, "MATCHMAKING_ADVERTISED_ADDRESS")
    return config
