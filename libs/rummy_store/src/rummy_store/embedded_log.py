"""The embedded event log: one sqlite file, same semantics as the Kafka log, for the default run and tests.

A transaction (``BEGIN IMMEDIATE``) makes the expected-seq check and the insert atomic, so any number of
writers, in threads or processes sharing the file, keep each game gap-free and duplicate-free. Offsets are
numbered per partition from 0, as in Kafka, so positions in snapshots mean the same in both backends.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from rummy_store.errors import ConcurrencyError
from rummy_store.event_log import EventLog, Subscription, validate_append
from rummy_store.partitioning import DEFAULT_PARTITIONS
from rummy_store.records import AppendResult, EventRecord, LogPosition, NewEvent

log = logging.getLogger("rummy_store")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
  partition INTEGER NOT NULL, offset INTEGER NOT NULL,
  game_id TEXT NOT NULL, seq INTEGER NOT NULL, command_id TEXT NOT NULL,
  event_type TEXT NOT NULL, schema_version INTEGER NOT NULL, payload BLOB NOT NULL,
  PRIMARY KEY (partition, offset), UNIQUE (game_id, seq));
CREATE INDEX IF NOT EXISTS events_by_command ON events (game_id, command_id);
CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS group_offsets (
  group_id TEXT NOT NULL, partition INTEGER NOT NULL, offset INTEGER NOT NULL,
  PRIMARY KEY (group_id, partition));
"""
_COLUMNS = "game_id, seq, command_id, event_type, schema_version, payload, partition, offset"
_BATCH = 1000


def _record(row: tuple[str, int, str, str, int, bytes, int, int]) -> EventRecord:
    game_id, seq, command_id, event_type, schema_version, payload, partition, offset = row
    return EventRecord(
        game_id, seq, command_id, event_type, schema_version, payload, LogPosition(partition, offset)
    )


class EmbeddedEventLog(EventLog):
    """Event log in a sqlite file (``":memory:"`` works for a single instance)."""

    def __init__(self, path: str | Path, partitions: int = DEFAULT_PARTITIONS) -> None:
        if partitions < 1:
            raise ValueError("partitions must be >= 1")
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
        self._lock = threading.Lock()  # one connection, shared by this instance's threads
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(_SCHEMA)
            self._db.execute("INSERT OR IGNORE INTO settings VALUES ('partitions', ?)", (partitions,))
            (stored,) = self._db.execute("SELECT value FROM settings WHERE name = 'partitions'").fetchone()
        # game -> partition must never change for an existing log: it keeps the count it was created
        # with, as a Kafka topic does (rummy_store.kafka_topic)
        if stored != partitions:
            log.warning(
                "%s was created with %d partitions, not %d: using its %d", path, stored, partitions, stored
            )
        self.partitions = int(stored)

    def append(
        self, game_id: str, command_id: str, expected_seq: int, events: Sequence[NewEvent]
    ) -> AppendResult:
        validate_append(game_id, command_id, expected_seq, events)
        partition = self.partition_for(game_id)
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                result = self._append_locked(game_id, command_id, expected_seq, events, partition)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        return result

    def _append_locked(
        self, game_id: str, command_id: str, expected_seq: int, events: Sequence[NewEvent], partition: int
    ) -> AppendResult:
        earlier = self._db.execute(
            "SELECT seq, partition, offset FROM events WHERE game_id = ? AND command_id = ? ORDER BY seq",
            (game_id, command_id),
        ).fetchall()
        if earlier:
            return AppendResult(
                game_id, earlier[0][0], earlier[-1][0], tuple(LogPosition(p, o) for _, p, o in earlier), True
            )
        last = self._last_seq_locked(game_id)
        if last != expected_seq:
            raise ConcurrencyError(game_id, expected_seq, last)
        (offset,) = self._db.execute(
            "SELECT COALESCE(MAX(offset) + 1, 0) FROM events WHERE partition = ?", (partition,)
        ).fetchone()
        rows = [
            (
                partition,
                offset + i,
                game_id,
                expected_seq + 1 + i,
                command_id,
                e.event_type,
                e.schema_version,
                e.payload,
            )
            for i, e in enumerate(events)
        ]
        self._db.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
        positions = tuple(LogPosition(partition, row[1]) for row in rows)
        return AppendResult(game_id, expected_seq + 1, expected_seq + len(events), positions)

    def _last_seq_locked(self, game_id: str) -> int:
        (last,) = self._db.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM events WHERE game_id = ?", (game_id,)
        ).fetchone()
        return int(last)

    def last_seq(self, game_id: str) -> int:
        with self._lock:
            return self._last_seq_locked(game_id)

    def read_stream(
        self, game_id: str, from_seq: int = 1, hint: LogPosition | None = None
    ) -> Iterator[EventRecord]:
        # The (game_id, seq) index makes the hint unnecessary here.
        seq = from_seq
        while True:
            with self._lock:
                rows = self._db.execute(
                    f"SELECT {_COLUMNS} FROM events WHERE game_id = ? AND seq >= ? ORDER BY seq LIMIT ?",
                    (game_id, seq, _BATCH),
                ).fetchall()
            yield from map(_record, rows)
            if len(rows) < _BATCH:
                return
            seq = rows[-1][1] + 1

    def read_partition(self, partition: int, from_offset: int = 0) -> Iterator[EventRecord]:
        self._check_partition(partition)
        end = self.end_offset(partition)
        offset = from_offset
        while offset < end:
            with self._lock:
                rows = self._db.execute(
                    f"SELECT {_COLUMNS} FROM events WHERE partition = ? AND offset >= ? AND offset < ? "
                    "ORDER BY offset LIMIT ?",
                    (partition, offset, end, _BATCH),
                ).fetchall()
            if not rows:
                return
            yield from map(_record, rows)
            offset = rows[-1][7] + 1

    def end_offset(self, partition: int) -> int:
        self._check_partition(partition)
        with self._lock:
            (end,) = self._db.execute(
                "SELECT COALESCE(MAX(offset) + 1, 0) FROM events WHERE partition = ?", (partition,)
            ).fetchone()
        return int(end)

    def _check_partition(self, partition: int) -> None:
        if not 0 <= partition < self.partitions:
            raise ValueError(f"partition {partition} out of range 0..{self.partitions - 1}")

    def subscribe(self, group_id: str) -> Subscription:
        return _EmbeddedSubscription(self, group_id)

    def committed(self, group_id: str) -> dict[int, int]:
        """The group's next offset per partition (0 for partitions it never committed)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT partition, offset FROM group_offsets WHERE group_id = ?", (group_id,)
            ).fetchall()
        return {p: 0 for p in range(self.partitions)} | dict(rows)

    def commit_offsets(self, group_id: str, offsets: dict[int, int]) -> None:
        with self._lock:
            self._db.executemany(
                "INSERT INTO group_offsets VALUES (?, ?, ?) "
                "ON CONFLICT (group_id, partition) DO UPDATE SET offset = excluded.offset",
                [(group_id, p, o) for p, o in offsets.items()],
            )

    def close(self) -> None:
        with self._lock:
            self._db.close()


class _EmbeddedSubscription(Subscription):
    """A group member of the embedded log. One process owns the file, so a member is given every
    partition (Kafka would split them between members); committed offsets persist in the file."""

    def __init__(self, log: EmbeddedEventLog, group_id: str) -> None:
        self._log = log
        self._group_id = group_id
        self._next = log.committed(group_id)

    def poll(self, timeout_s: float) -> list[EventRecord]:
        deadline = time.monotonic() + timeout_s
        while True:
            records: list[EventRecord] = []
            for partition, offset in self._next.items():
                for record in self._log.read_partition(partition, offset):
                    records.append(record)
                    if len(records) >= _BATCH:
                        break
                if records:
                    self._next[partition] = records[-1].position.offset + 1
                    return records
            if time.monotonic() >= deadline:
                return []
            time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))

    def commit(self) -> None:
        self._log.commit_offsets(self._group_id, self._next)

    def close(self) -> None:
        pass
