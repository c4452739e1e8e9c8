"""Where a partition's writer keeps its checkpoint (offset plus heads of open streams), so a new owner
reads only what was written since instead of the whole partition. A cache: losing it costs one full
read of the partition at the next takeover, nothing else."""

from __future__ import annotations

import abc

import redis


class CheckpointStore(abc.ABC):
    @abc.abstractmethod
    def load(self, name: str) -> bytes | None: ...

    @abc.abstractmethod
    def save(self, name: str, data: bytes) -> None: ...


class RedisCheckpoints(CheckpointStore):
    """One string per partition at ``{prefix}checkpoint:{topic}:{partition}``."""

    def __init__(self, client: redis.Redis, prefix: str = "") -> None:
        self._redis = client
        self._prefix = prefix

    def load(self, name: str) -> bytes | None:
        data = self._redis.get(f"{self._prefix}checkpoint:{name}")
        return bytes(data) if data is not None else None  # type: ignore[arg-type]

    def save(self, name: str, data: bytes) -> None:
        self._redis.set(f"{self._prefix}checkpoint:{name}", data)
