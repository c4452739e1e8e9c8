"""Finds or starts the Kafka broker and Redis server that tests and benchmarks use.

Order (DESIGN.md, issue 3): addresses in ``MELDSTREAM_KAFKA`` / ``MELDSTREAM_REDIS``, then testcontainers
when a Docker engine answers, then local processes started from ``deploy/local/*.sh``.
"""

from rummy_infra.servers import Server, provide_kafka, provide_redis

__all__ = ["Server", "provide_kafka", "provide_redis"]
