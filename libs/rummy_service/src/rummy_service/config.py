"""Reading configuration from environment variables, once, with errors that name the variable."""

from __future__ import annotations

import os
from collections.abc import Mapping

from rummy_store.kafka_topic import Replication


class ConfigError(ValueError):
    """A setting the service cannot use: a bad environment variable, or a store it cannot read."""


class OtherFormat(ConfigError):
    """A store written in another format than this build reads: it is refused, never upcast.

    Each service words `what` it stores, what would be `lost` by reading on, and the `remedy`.
    """

    def __init__(self, where: str, version: int, *, what: str, current: int, lost: str, remedy: str) -> None:
        age = "an older" if version < current else "a newer"
        super().__init__(
            f"{where} was written by {age} meldstream ({what} {version}; this one reads format {current}), "
            f"whose {lost} it cannot continue. Start from a new store: {remedy}"
        )
        self.version = version


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
