"""Finds or starts the Kafka broker (or a private cluster) and Redis server that tests and benchmarks use.

Order (DESIGN.md, issue 3): addresses in ``MELDSTREAM_KAFKA`` / ``MELDSTREAM_REDIS``, then testcontainers
when a Docker engine answers, then local processes started from ``deploy/local/*.sh``.
"""

from rummy_infra.kafka_cluster import KafkaCluster, provide_kafka_cluster
from rummy_infra.servers import Server, provide_kafka, provide_redis

__all__ = ["KafkaCluster", "Server", "provide_kafka", "provide_kafka_cluster", "provide_redis"]
