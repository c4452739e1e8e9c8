"""Game id -> partition, the same function Kafka's Java and Python clients use for keyed records."""

from kafka.partitioner.default import murmur2

DEFAULT_PARTITIONS = 64
"""Partitions of a log created without a count: room for 64 instances sharing it (each owns whole
partitions). A log that exists keeps its own count: the mapping below depends on it."""


def partition_for(game_id: str, partitions: int) -> int:
    """Murmur2 of the UTF-8 game id, as Kafka's default partitioner, so other clients agree with us."""
    digest: int = murmur2(game_id.encode())
    return (digest & 0x7FFFFFFF) % partitions
