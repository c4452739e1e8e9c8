"""Reading configuration from environment variables, once, with errors that name the variable.

Each check here is the one place its rule lives: every service's `config.load` and the `meldstream`
command call these, so a mistake reads the same wherever it is made.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final

# Re-exported (`as`): the services raise and catch them as this module's (`except ConfigError` at start).
from rummy_store.config_errors import ConfigError as ConfigError  # noqa: PLC0414
from rummy_store.config_errors import OtherFormat as OtherFormat  # noqa: PLC0414
from rummy_store.kafka_clients import BACKENDS, KAFKA_PYTHON
from rummy_store.kafka_topic import Replication
from rummy_store.locations import LocationError, StoreLocation, is_redis_url, redacted

from rummy_service.text import clipped

DEV_VARIABLE: Final = "MELDSTREAM_DEV"
STORE_VARIABLE: Final = "MELDSTREAM_STORE"
CLIENT_VARIABLE: Final = "KAFKA_CLIENT"
MIN_SECRET_BYTES: Final = 32
SERVICE_CREDENTIAL_VARIABLE: Final = "MELDSTREAM_SERVICE_CREDENTIAL"
"""A service's own credential at identity (`mss_...`), exchanged for its access tokens."""
CONNECT_WAIT_VARIABLE: Final = "MELDSTREAM_CONNECT_WAIT_S"
DEFAULT_CONNECT_WAIT_S: Final = 15


class WrongForm(ConfigError):
    """A setting not written in the form it takes (a Redis or store URL): the command line's usage
    error, so `meldstream` exits 2 for it as argparse does for a bad option."""


def env_str(name: str, default: str, env: Mapping[str, str] | None = None) -> str:
    source = os.environ if env is None else env
    return source.get(name, default)


def env_int(name: str, default: int, env: Mapping[str, str] | None = None, minimum: int = 0) -> int:
    raw = env_str(name, "", env)
    if raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not an integer") from None
    if value < minimum:
        raise ConfigError(f"{name}={value} is below the minimum {minimum}")
    return value


def check_store_pair(kafka: str, redis: str, names: str = "KAFKA_BOOTSTRAP and REDIS_URL") -> None:
    """Kafka + Redis, or neither (the embedded sqlite store): one alone is a half-set deployment.

    Kafka is the log but Redis holds what makes it safe to use (the engine's single-writer fence and
    snapshots, scoring's state), and the embedded store uses neither; checked up front, the error names
    both settings instead of a later failure naming the missing one. `names` says how the caller sets
    them (environment variables, or command-line options).
    """
    if bool(kafka) != bool(redis):
        raise ConfigError(f"set both {names}, or neither (the embedded store)")


def store_location(
    data_dir_variable: str,
    default_dir: str,
    env: Mapping[str, str] | None = None,
    *,
    redis_required: bool = True,
) -> StoreLocation:
    """The service's store (`rummy_store.locations`): MELDSTREAM_STORE, or the settings it stands for,
    KAFKA_BOOTSTRAP and REDIS_URL (and KAFKA_CLIENT, the Kafka backend: kafka-python or rdkafka, as
    the URL's scheme kafka:// or kafka+rdkafka:// says), or neither for the embedded store in
    `data_dir_variable`.

    The one URL or the separate settings, not both: two answers to where the records are would leave
    one of them silently unused. `redis_required=False`: Kafka without Redis is a deployment too
    (matchmaking's single instance).
    """
    url = env_str(STORE_VARIABLE, "", env)
    if not url:
        kafka = env_str("KAFKA_BOOTSTRAP", "", env)
        redis = redis_url("REDIS_URL", env)
        if redis_required:
            check_store_pair(kafka, redis)
        client = env_str(CLIENT_VARIABLE, KAFKA_PYTHON, env)
        if client not in BACKENDS:
            raise ConfigError(f"{CLIENT_VARIABLE}={client[:40]!r} is not one of {', '.join(BACKENDS)}")
        return StoreLocation(kafka, redis, env_str(data_dir_variable, default_dir, env), client=client)
    for name in ("KAFKA_BOOTSTRAP", CLIENT_VARIABLE, "REDIS_URL", data_dir_variable):
        if env_str(name, "", env):
            raise ConfigError(
                f"{STORE_VARIABLE} and {name} are both set: {STORE_VARIABLE} names the whole store, "
                f"so unset {name}"
            )
    try:
        return StoreLocation.parse(url, STORE_VARIABLE, redis_required=redis_required)
    except LocationError as exc:
        raise WrongForm(str(exc)) from None


def kafka_replication(env: Mapping[str, str] | None = None) -> Replication:
    """KAFKA_REPLICATION_FACTOR and KAFKA_MIN_INSYNC_REPLICAS: replicas and min.insync.replicas of the
    topics a service creates (an existing topic keeps its own). Unset or 0: from the cluster, min(3,
    brokers) replicas and min ISR 2 from 3 replicas (rummy_store.kafka_topic). Every service reads the
    same two variables, so whichever creates a topic first gives it the same settings."""
    return checked_replication(
        env_int("KAFKA_REPLICATION_FACTOR", 0, env), env_int("KAFKA_MIN_INSYNC_REPLICAS", 0, env)
    )


def checked_replication(factor: int, min_insync: int) -> Replication:
    """The two settings as a `Replication`, refused up front when no acks=all write could succeed."""
    if factor and min_insync > factor:
        raise ConfigError(
            f"KAFKA_MIN_INSYNC_REPLICAS={min_insync} is above KAFKA_REPLICATION_FACTOR={factor}: "
            "no acknowledged write could succeed"
        )
    return Replication(factor, min_insync)


def dev_mode(env: Mapping[str, str] | None = None) -> bool:
    """MELDSTREAM_DEV=1: development mode, where the public development token secret and seed key are
    accepted (and used when unset). Anything else needs real secrets."""
    raw = env_str(DEV_VARIABLE, "", env).strip().lower()
    if raw in ("", "0", "false", "no"):
        return False
    if raw in ("1", "true", "yes"):
        return True
    raise ConfigError(f"{DEV_VARIABLE}={raw!r} is not 1 (development mode) or 0")


def secret(name: str, development: str, env: Mapping[str, str] | None = None, *, dev: bool) -> str:
    """The secret in variable `name`: required outside development mode, where its public `development`
    value is refused too (anyone could sign tokens or predict deals with it); at least 32 bytes when set."""
    return secrets({name: development}, env, dev=dev)[name]


def secrets(wanted: Mapping[str, str], env: Mapping[str, str] | None = None, *, dev: bool) -> dict[str, str]:
    """Each secret of `wanted` (variable: its public development value) as `secret` checks it, all
    checked before any is refused: one `ConfigError` names every one to set, not the first alone."""
    source = os.environ if env is None else env
    found: dict[str, str] = {}
    wrong: list[str] = []
    short: list[str] = []  # development mode would not help these
    for name, development in wanted.items():
        value = source.get(name, "")
        if not value and not dev:
            wrong.append(f"{name} is {'empty' if name in source else 'not set'}")
        elif value == development and not dev:
            wrong.append(f"{name} is the public development value, refused outside development mode")
        elif value and value != development and len(value.encode()) < MIN_SECRET_BYTES:
            short.append(f"{name} is {len(value.encode())} bytes, too short")
        found[name] = value or development
    if wrong or short:
        each = "it" if len(wrong) + len(short) == 1 else "each"
        hint = f"set {each} to a random secret of {MIN_SECRET_BYTES} bytes or more (`openssl rand -hex 32`)"
        local = f", or {DEV_VARIABLE}=1 for local development" if wrong else ""
        raise ConfigError(f"{'; '.join(wrong + short)}: {hint}{local}")
    return found


def connect_wait_s(env: Mapping[str, str] | None = None) -> int:
    """MELDSTREAM_CONNECT_WAIT_S: how long a service waits at start for Kafka and Redis to answer (15 s)
    before it gives up with one line naming what did not answer."""
    return env_int(CONNECT_WAIT_VARIABLE, DEFAULT_CONNECT_WAIT_S, env, minimum=1)


def address_setting(name: str, default: str, env: Mapping[str, str] | None = None) -> str:
    """A HOST:PORT setting, with a port 0-65535 (to listen on, 0: any free one). Checked here because
    gRPC takes port 99999 as 34463 and a missing port as 443, and listens there without a word."""
    value = env_str(name, default, env)
    check_address(value, name)
    return value


def check_address(value: str, setting: str) -> None:
    """`value` is HOST:PORT with a port 0-65535 (an IPv6 host in brackets); `setting` names its source."""
    host, colon, port = value.rpartition(":")
    if not colon or not host or not port.isdigit() or int(port) > 65535:
        raise ConfigError(f"{setting}={value!r} is not HOST:PORT with a port 0-65535 (e.g. 127.0.0.1:50051)")
    if ":" in host and not (host.startswith("[") and host.endswith("]")):
        raise ConfigError(f"{setting}={value!r}: write an IPv6 host in brackets, e.g. [::1]:50051")


def redis_url(name: str, env: Mapping[str, str] | None = None) -> str:
    """The Redis URL in variable `name` ("" = none), checked by `check_redis_url`."""
    value = env_str(name, "", env)
    if value:
        check_redis_url(value, name)
    return value


def check_redis_url(value: str, setting: str) -> None:
    """`value` is a Redis URL (redis://, rediss:// or unix://), so a bare host:port is caught here and
    not as redis-py's ValueError or a connection error later; `setting` names its source."""
    if not is_redis_url(value):
        shown = repr(clipped(redacted(value), 80))
        raise WrongForm(
            f"{setting}={shown} is not a Redis URL: write redis://HOST:PORT/0 (or rediss://, unix://)"
        )
