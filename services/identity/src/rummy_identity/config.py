"""Identity configuration: environment variables only, parsed once at start-up."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

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
from rummy_service.rate_limits import LimitSettings, load_limits
from rummy_service.tls import PLAINTEXT, Tls, load_tls
from rummy_store.kafka_clients import KAFKA_PYTHON
from rummy_store.kafka_topic import FROM_CLUSTER, Replication
from rummy_store.locations import StoreLocation

from rummy_identity.accounts import SERVICE_SCOPES, Lifetimes
from rummy_identity.keys import KeyPolicy
from rummy_identity.passwords import Cost
from rummy_identity.provider import CLIENT_VARIABLE, ISSUER_VARIABLE, ProviderSettings, load_settings
from rummy_identity.store import PARTITIONS, TOPIC

DEV_KEY_SECRET = "meldstream-development-identity-key-secret"  # development mode only (MELDSTREAM_DEV=1)
CREDENTIALS_VARIABLE = "IDENTITY_SERVICE_CREDENTIALS"


@dataclass(frozen=True, slots=True)
class IdentityConfig:
    """Where to listen and keep accounts. Empty `kafka` selects the embedded log in `data_dir`."""

    address: str = "127.0.0.1:50054"
    advertised: str = ""  # where other instances forward calls to this one ("" = the bound address)
    kafka: str = ""
    redis: str = ""
    group: str = ""  # the instances' consumer group ("" = meldstream-identity.<topic>)
    topic: str = TOPIC
    key_prefix: str = ""
    partitions: int = PARTITIONS  # for a topic that is missing; an existing one keeps its count
    replication: Replication = FROM_CLUSTER
    data_dir: str = ".local/identity"
    store_setting: str = field(default="", compare=False)
    kafka_client: str = KAFKA_PYTHON  # the Kafka backend (KAFKA_CLIENT, or the URL's scheme)
    key_secret: str = DEV_KEY_SECRET  # load refuses it outside development mode
    services: dict[str, bytes] = field(default_factory=dict)  # service -> SHA-256 of its credential
    keys: KeyPolicy = field(default_factory=KeyPolicy)
    lifetimes: Lifetimes = field(default_factory=Lifetimes)
    argon2: Cost = field(default_factory=Cost)
    connect_wait_s: int = DEFAULT_CONNECT_WAIT_S
    tls: Tls = PLAINTEXT
    limits: LimitSettings = field(default_factory=LimitSettings)  # calls per account and per address
    provider: ProviderSettings = field(default_factory=ProviderSettings)  # the OpenID provider, if any

    @property
    def store(self) -> StoreLocation:
        return StoreLocation(self.kafka, self.redis, self.data_dir, self.store_setting, self.kafka_client)

    @property
    def embedded(self) -> bool:
        return self.store.embedded

    def needs(self) -> Needs:
        return store_needs(self.store, "IDENTITY_DATA_DIR", self.connect_wait_s)

    @property
    def group_id(self) -> str:
        return self.group or f"meldstream-identity.{self.topic}"


def service_credentials(raw: str) -> dict[str, bytes]:
    """IDENTITY_SERVICE_CREDENTIALS: `name=<sha256 hex>` pairs, comma-separated, one per service that
    may exchange a credential for tokens (`meldstream accounts service-credential NAME` makes one)."""
    found: dict[str, bytes] = {}
    for item in filter(None, (part.strip() for part in raw.split(","))):
        name, equals, digest = item.partition("=")
        if not equals or name not in SERVICE_SCOPES:
            raise ConfigError(
                f"{CREDENTIALS_VARIABLE}: {item[:40]!r} is not NAME=SHA256 with NAME one of "
                f"{', '.join(SERVICE_SCOPES)}"
            )
        try:
            value = bytes.fromhex(digest)
        except ValueError:
            value = b""
        if len(value) != 32:
            raise ConfigError(f"{CREDENTIALS_VARIABLE}: the hash of {name} is not 64 hex digits")
        found[name] = value
    return found


def load(env: Mapping[str, str] | None = None) -> IdentityConfig:
    """Read IDENTITY_* (and MELDSTREAM_STORE or KAFKA_BOOTSTRAP and REDIS_URL, KAFKA_REPLICATION_FACTOR,
    KAFKA_MIN_INSYNC_REPLICAS, MELDSTREAM_DEV, TLS_*; IDENTITY_OIDC_ISSUER and IDENTITY_OIDC_CLIENT_ID
    for the OpenID provider)."""
    d = IdentityConfig()
    store = store_location("IDENTITY_DATA_DIR", d.data_dir, env, redis_required=False)
    access_ttl = env_int("IDENTITY_ACCESS_TTL_S", d.keys.access_ttl_s, env, minimum=10)
    config = IdentityConfig(
        address=address_setting("IDENTITY_ADDRESS", d.address, env),
        advertised=env_str("IDENTITY_ADVERTISED_ADDRESS", d.advertised, env),
        kafka=store.kafka,
        redis=store.redis,
        group=env_str("IDENTITY_GROUP", d.group, env),
        topic=env_str("IDENTITY_TOPIC", d.topic, env),
        key_prefix=env_str("IDENTITY_KEY_PREFIX", d.key_prefix, env),
        partitions=env_int("IDENTITY_PARTITIONS", d.partitions, env, minimum=1),
        replication=kafka_replication(env),
        data_dir=store.directory or d.data_dir,
        store_setting=store.setting,
        kafka_client=store.client,
        key_secret=secret("IDENTITY_KEY_SECRET", DEV_KEY_SECRET, env, dev=dev_mode(env)),
        services=service_credentials(env_str(CREDENTIALS_VARIABLE, "", env)),
        keys=KeyPolicy(
            rotate_s=env_int("IDENTITY_KEY_ROTATE_S", d.keys.rotate_s, env, minimum=60),
            lead_s=env_int("IDENTITY_KEY_LEAD_S", d.keys.lead_s, env, minimum=1),
            access_ttl_s=access_ttl,
        ),
        lifetimes=Lifetimes(
            refresh_s=env_int("IDENTITY_REFRESH_TTL_S", d.lifetimes.refresh_s, env, minimum=60),
            name_reserved_s=env_int("IDENTITY_NAME_RESERVED_S", d.lifetimes.name_reserved_s, env),
        ),
        argon2=Cost(
            memory_kib=env_int("IDENTITY_ARGON2_MEMORY_KIB", d.argon2.memory_kib, env, minimum=8),
            time_cost=env_int("IDENTITY_ARGON2_TIME_COST", d.argon2.time_cost, env, minimum=1),
            parallelism=env_int("IDENTITY_ARGON2_PARALLELISM", d.argon2.parallelism, env, minimum=1),
        ),
        connect_wait_s=connect_wait_s(env),
        tls=load_tls(env),
        limits=load_limits(env),
        provider=load_settings(env_str(ISSUER_VARIABLE, "", env), env_str(CLIENT_VARIABLE, "", env)),
    )
    if config.advertised:
        check_address(config.advertised, "IDENTITY_ADVERTISED_ADDRESS")
    return config
