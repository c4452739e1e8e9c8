"""Snapshots in a sqlite file, for the embedded default run."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from rummy_store.records import LogPosition
from rummy_store.snapshots import Snapshot, SnapshotStore


class EmbeddedSnapshotStore(SnapshotStore):
    def __init__(self, path: str | Path) -> None:
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS snapshots (game_id TEXT PRIMARY KEY, seq INTEGER NOT NULL, "
                "partition INTEGER NOT NULL, offset INTEGER NOT NULL, rules_version TEXT NOT NULL, "
                "state BLOB NOT NULL)"
            )

    def save(self, snapshot: Snapshot) -> bool:
        s = snapshot
        with self._lock:
            cursor = self._db.execute(
                "INSERT INTO snapshots VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (game_id) DO UPDATE SET "
                "seq = excluded.seq, partition = excluded.partition, offset = excluded.offset, "
                "rules_version = excluded.rules_version, state = excluded.state "
                "WHERE excluded.seq > snapshots.seq",
                (s.game_id, s.seq, s.position.partition, s.position.offset, s.rules_version, s.state),
            )
            return cursor.rowcount == 1

    def load(self, game_id: str) -> Snapshot | None:
        with self._lock:
            row = self._db.execute(
                "SELECT seq, partition, offset, rules_version, state FROM snapshots WHERE game_id = ?",
                (game_id,),
            ).fetchone()
        if row is None:
            return None
        seq, partition, offset, rules_version, state = row
        return Snapshot(game_id, seq, LogPosition(partition, offset), rules_version, state)

    def delete(self, game_id: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM snapshots WHERE game_id = ?", (game_id,))

    def close(self) -> None:
        with self._lock:
            self._db.close()
