"""Snapshots: a cache of a game's folded state at some sequence number, never the source of truth.

Deleting every snapshot changes no result (tested); a snapshot of another rules version is ignored.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass

from rummy_store.records import LogPosition


@dataclass(frozen=True, slots=True)
class Snapshot:
    """State bytes after applying events 1..``seq``; ``position`` is the log position of event ``seq``."""

    game_id: str
    seq: int
    position: LogPosition
    rules_version: str
    state: bytes


class SnapshotStore(abc.ABC):
    """Keeps the newest snapshot per game (an older one never overwrites a newer one)."""

    @abc.abstractmethod
    def save(self, snapshot: Snapshot) -> bool:
        """Store ``snapshot`` unless one with a higher seq exists; True when stored."""

    @abc.abstractmethod
    def load(self, game_id: str) -> Snapshot | None: ...

    @abc.abstractmethod
    def delete(self, game_id: str) -> None: ...

    @abc.abstractmethod
    def close(self) -> None: ...
