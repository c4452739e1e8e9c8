"""Kafka and Redis from testcontainers, used when a Docker engine answers.

Untested on the development machine (no Docker engine there); kept to the documented testcontainers 4 API.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from contextlib import contextmanager

# testcontainers' KafkaContainer drives Confluent's image scripts, so it needs cp-kafka (KRaft since 7.0).
KAFKA_IMAGE = "confluentinc/cp-kafka:7.9.0"
REDIS_IMAGE = "redis:7.4"


@functools.cache
def docker_answers() -> bool:
    """True when a Docker engine answers a ping within 3 s (cached: asked once per process)."""
    if not os.environ.get("DOCKER_HOST") and not os.path.exists("/var/run/docker.sock"):
        return False  # no engine to ask; the docker client would leak its socket while finding that out
    import docker

    try:
        client = docker.from_env(timeout=3)
    except Exception:  # any failure means "no usable engine"; the caller falls back to local processes
        return False
    try:
        return bool(client.ping())
    except Exception:
        return False
    finally:
        client.close()


@contextmanager
def kafka() -> Iterator[str]:
    from testcontainers.community.kafka import KafkaContainer

    with KafkaContainer(image=KAFKA_IMAGE).with_kraft() as container:
        yield str(container.get_bootstrap_server())


@contextmanager
def redis() -> Iterator[str]:
    from testcontainers.community.redis import RedisContainer

    with RedisContainer(image=REDIS_IMAGE) as container:
        host = container.get_container_host_ip()
        yield f"redis://{host}:{container.get_exposed_port(6379)}/0"
