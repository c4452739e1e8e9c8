"""Choosing where Kafka and Redis come from, and keeping them up only as long as they are needed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from rummy_infra import containers, local

KAFKA_ENV = "MELDSTREAM_KAFKA"
REDIS_ENV = "MELDSTREAM_REDIS"


@dataclass(frozen=True, slots=True)
class Server:
    """An address the caller can use, and a human account of where it came from (printed by tests)."""

    kind: str  # "kafka" or "redis"
    address: str  # Kafka bootstrap "host:port"; Redis URL "redis://host:port/0"
    origin: str


def describe_choice() -> str:
    """Where servers would come from, without starting anything (for the pytest header)."""
    parts = []
    for kind, env in (("kafka", KAFKA_ENV), ("redis", REDIS_ENV)):
        if os.environ.get(env):
            parts.append(f"{kind} from ${env}={os.environ[env]}")
        elif containers.docker_answers():
            parts.append(f"{kind} from testcontainers")
        else:
            parts.append(f"{kind} from a local process started on first use")
    return "; ".join(parts)


@contextmanager
def provide_kafka() -> Iterator[Server]:
    """Yield a Kafka bootstrap address; anything started here is stopped on exit."""
    if address := os.environ.get(KAFKA_ENV):
        yield Server("kafka", address, f"${KAFKA_ENV}")
    elif containers.docker_answers():
        with containers.kafka() as address:
            yield Server("kafka", address, f"testcontainers {containers.KAFKA_IMAGE}")
    else:
        with local.kafka() as (address, version):
            yield Server("kafka", address, f"local Apache Kafka {version} (deploy/local/kafka.sh)")


@contextmanager
def provide_redis() -> Iterator[Server]:
    """Yield a Redis URL; anything started here is stopped on exit."""
    if address := os.environ.get(REDIS_ENV):
        url = address if "://" in address else f"redis://{address}/0"
        yield Server("redis", url, f"${REDIS_ENV}")
    elif containers.docker_answers():
        with containers.redis() as url:
            yield Server("redis", url, f"testcontainers {containers.REDIS_IMAGE}")
    else:
        with local.redis() as (url, version):
            yield Server("redis", url, f"local redis-server {version} (deploy/local/redis.sh)")
