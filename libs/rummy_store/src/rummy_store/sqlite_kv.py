"""The embedded key-value store: the Redis commands scoring uses, on one sqlite file (stdlib only).

It lives beside the other stores so that one factory (`rummy_store.locations`) opens Redis or this.

Why this shape: the handlers' correctness rests on one property, effects and tracking seq committed
together (MULTI/EXEC after WATCH). Giving sqlite the same small command set, with `watch` opening an
immediate transaction that `execute` commits, keeps one handler, one reader and one outbox relay for
both stores, and one contract suite (scoring's `tests/test_handlers.py`) runs against each. Replies
are bytes, as redis-py's. Only what scoring calls is here; `watch` never fails (the transaction holds
the file's write lock, so nothing can change a watched key before `execute`).

One connection serves every thread (consumer loops, the outbox relay, queries), each call under a
lock; a pipeline holds the lock from `watch` to `execute` or its end.
"""

from __future__ import annotations

import builtins
import fnmatch
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

Value = bytes | str | int | float

SCHEMA = """
CREATE TABLE IF NOT EXISTS strings (key TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS lists (key TEXT, pos INTEGER, value BLOB NOT NULL, PRIMARY KEY (key, pos));
CREATE TABLE IF NOT EXISTS hashes (key TEXT, field BLOB, value BLOB NOT NULL, PRIMARY KEY (key, field));
CREATE TABLE IF NOT EXISTS zsets (key TEXT, member BLOB, score REAL NOT NULL, PRIMARY KEY (key, member));
CREATE TABLE IF NOT EXISTS sets (key TEXT, member BLOB, PRIMARY KEY (key, member));
"""
KINDS = (
    ("strings", b"string"),
    ("lists", b"list"),
    ("hashes", b"hash"),
    ("zsets", b"zset"),
    ("sets", b"set"),
)


def _bytes(value: Value) -> bytes:
    """Redis stores every value as a string: numbers as their text, as redis-py sends them."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    return repr(value).encode()


def _key(key: str | bytes) -> str:
    return key.decode() if isinstance(key, bytes) else key


def _score(value: float) -> float:
    return float(value)


class _Commands:
    """The commands, on a connection whose transaction the caller manages."""

    _db: sqlite3.Connection

    def get(self, key: str) -> bytes | None:
        row = self._db.execute("SELECT value FROM strings WHERE key = ?", (_key(key),)).fetchone()
        return None if row is None else bytes(row[0])

    def mget(self, keys: Iterable[str]) -> list[bytes | None]:
        return [self.get(key) for key in keys]

    def set(self, key: str, value: Value) -> bool:
        self._db.execute("INSERT OR REPLACE INTO strings VALUES (?, ?)", (_key(key), _bytes(value)))
        return True

    def delete(self, *keys: str) -> int:
        removed = 0
        for key in keys:
            removed += self.type(key) != b"none"
            for table, _ in KINDS:
                self._db.execute(f"DELETE FROM {table} WHERE key = ?", (_key(key),))
        return removed

    def exists(self, *keys: str) -> int:
        return sum(self.type(key) != b"none" for key in keys)

    def rpush(self, key: str, *values: Value) -> int:
        for value in values:
            self._db.execute(
                "INSERT INTO lists VALUES"
                " (?, (SELECT COALESCE(MAX(pos), -1) + 1 FROM lists WHERE key = ?), ?)",
                (_key(key), _key(key), _bytes(value)),
            )
        return self.llen(key)

    def llen(self, key: str) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM lists WHERE key = ?", (_key(key),)).fetchone()[0])

    def _bounds(self, key: str, start: int, end: int) -> tuple[int, int]:
        """Redis's inclusive, negative-from-the-end range as (offset, count) over the list's order."""
        length = self.llen(key)
        start = max(start + length if start < 0 else start, 0)
        end = min(end + length if end < 0 else end, length - 1)
        return start, max(end - start + 1, 0)

    def lrange(self, key: str, start: int, end: int) -> list[bytes]:
        offset, count = self._bounds(key, start, end)
        rows = self._db.execute(
            "SELECT value FROM lists WHERE key = ? ORDER BY pos LIMIT ? OFFSET ?", (_key(key), count, offset)
        )
        return [bytes(value) for (value,) in rows]

    def ltrim(self, key: str, start: int, end: int) -> bool:
        offset, count = self._bounds(key, start, end)
        positions = [
            pos
            for (pos,) in self._db.execute(
                "SELECT pos FROM lists WHERE key = ? ORDER BY pos LIMIT ? OFFSET ?",
                (_key(key), count, offset),
            )
        ]
        if not positions:
            self._db.execute("DELETE FROM lists WHERE key = ?", (_key(key),))
        else:
            self._db.execute(
                "DELETE FROM lists WHERE key = ? AND (pos < ? OR pos > ?)",
                (_key(key), positions[0], positions[-1]),
            )
        return True

    def hset(self, key: str, mapping: Mapping[str, Value]) -> int:
        for name, value in mapping.items():
            self._db.execute(
                "INSERT OR REPLACE INTO hashes VALUES (?, ?, ?)", (_key(key), _bytes(name), _bytes(value))
            )
        return len(mapping)

    def hgetall(self, key: str) -> dict[bytes, bytes]:
        rows = self._db.execute("SELECT field, value FROM hashes WHERE key = ?", (_key(key),))
        return {bytes(name): bytes(value) for name, value in rows}

    def hmget(self, key: str, names: Iterable[Value]) -> list[bytes | None]:
        wanted = [_bytes(name) for name in names]
        marks = ",".join("?" * len(wanted))
        rows = self._db.execute(
            f"SELECT field, value FROM hashes WHERE key = ? AND field IN ({marks})", (_key(key), *wanted)
        )
        found = {bytes(name): bytes(value) for name, value in rows}
        return [found.get(name) for name in wanted]

    def hincrby(self, key: str, name: Value, amount: int = 1) -> int:
        current = self.hgetall(key).get(_bytes(name), b"0")
        new = int(current) + amount
        self.hset(key, {_bytes(name).decode(): new})
        return new

    def zincrby(self, key: str, amount: float, member: Value) -> float:
        self._db.execute(
            "INSERT INTO zsets VALUES (?, ?, ?) ON CONFLICT (key, member) DO UPDATE SET score = score + ?",
            (_key(key), _bytes(member), _score(amount), _score(amount)),
        )
        row = self._db.execute(
            "SELECT score FROM zsets WHERE key = ? AND member = ?", (_key(key), _bytes(member))
        ).fetchone()
        return float(row[0])

    def zadd(self, key: str, mapping: Mapping[str, float]) -> int:
        added = 0
        for member, score in mapping.items():
            known = self._db.execute(
                "SELECT 1 FROM zsets WHERE key = ? AND member = ?", (_key(key), _bytes(member))
            ).fetchone()
            added += known is None
            self._db.execute(
                "INSERT OR REPLACE INTO zsets VALUES (?, ?, ?)", (_key(key), _bytes(member), _score(score))
            )
        return added

    def zrem(self, key: str, *members: Value) -> int:
        removed = 0
        for member in members:
            cursor = self._db.execute(
                "DELETE FROM zsets WHERE key = ? AND member = ?", (_key(key), _bytes(member))
            )
            removed += cursor.rowcount
        return removed

    def zremrangebyrank(self, key: str, start: int, end: int) -> int:
        gone = [member for member, _ in self._zrange(key, start, end, descending=False)]
        return self.zrem(key, *gone)

    def zcard(self, key: str) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM zsets WHERE key = ?", (_key(key),)).fetchone()[0])

    def _zrange(self, key: str, start: int, end: int, descending: bool) -> list[tuple[bytes, float]]:
        length = self.zcard(key)
        start = max(start + length if start < 0 else start, 0)
        end = min(end + length if end < 0 else end, length - 1)
        order = "score DESC, member DESC" if descending else "score, member"  # Redis: ties by member
        rows = self._db.execute(
            f"SELECT member, score FROM zsets WHERE key = ? ORDER BY {order} LIMIT ? OFFSET ?",
            (_key(key), max(end - start + 1, 0), start),
        )
        return [(bytes(member), float(score)) for member, score in rows]

    def zrange(self, key: str, start: int, end: int, withscores: bool = False) -> list[Any]:
        rows = self._zrange(key, start, end, descending=False)
        return rows if withscores else [member for member, _ in rows]

    def zrevrange(self, key: str, start: int, end: int, withscores: bool = False) -> list[Any]:
        rows = self._zrange(key, start, end, descending=True)
        return rows if withscores else [member for member, _ in rows]

    def sadd(self, key: str, *members: Value) -> int:
        added = 0
        for member in members:
            cursor = self._db.execute("INSERT OR IGNORE INTO sets VALUES (?, ?)", (_key(key), _bytes(member)))
            added += cursor.rowcount
        return added

    def sismember(self, key: str, member: Value) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM sets WHERE key = ? AND member = ?", (_key(key), _bytes(member))
        ).fetchone()
        return row is not None

    def smembers(self, key: str) -> builtins.set[bytes]:
        return {bytes(m) for (m,) in self._db.execute("SELECT member FROM sets WHERE key = ?", (_key(key),))}

    def type(self, key: str | bytes) -> bytes:
        for table, kind in KINDS:
            if self._db.execute(f"SELECT 1 FROM {table} WHERE key = ? LIMIT 1", (_key(key),)).fetchone():
                return kind
        return b"none"

    def scan_iter(self, match: str = "*") -> Iterator[bytes]:
        keys: set[str] = set()
        for table, _ in KINDS:
            keys.update(key for (key,) in self._db.execute(f"SELECT DISTINCT key FROM {table}"))
        return iter(sorted(key.encode() for key in keys if fnmatch.fnmatchcase(key, match)))


class SqliteKV(_Commands):
    """A sqlite file (or ":memory:") answering scoring's Redis commands; thread-safe."""

    def __init__(self, path: str | Path) -> None:
        self._lock = threading.RLock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)
        for name in _COMMANDS:
            setattr(self, name, self._locked(getattr(_Commands, name)))

    def _locked(self, command: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return command(self, *args, **kwargs)

        return call

    def ping(self) -> bool:
        with self._lock:
            self._db.execute("SELECT 1")
        return True

    def pipeline(self, transaction: bool = True) -> Pipeline:
        return Pipeline(self._db, self._lock, transaction)

    def close(self) -> None:
        with self._lock:
            self._db.close()


_COMMANDS = [name for name in vars(_Commands) if not name.startswith("_")]


class Pipeline(_Commands):
    """`watch` takes the lock and opens the transaction; reads answer at once until `multi`, then
    commands queue until `execute` commits them. Leaving without `execute` rolls back. Without
    `transaction` (redis-py's batched reads) commands queue from the start and `execute` answers them
    under the lock, inside a transaction this thread's other pipeline holds open, if any."""

    def __init__(self, db: sqlite3.Connection, lock: threading.RLock, transaction: bool = True) -> None:
        self._db = db
        self._lock = lock
        self._open = False
        self._queued: list[tuple[str, tuple[Any, ...], dict[str, Any]]] | None = None if transaction else []

    def watch(self, *keys: str) -> None:
        if not self._open:
            self._lock.acquire()
            self._db.execute("BEGIN IMMEDIATE")
            self._open = True

    def multi(self) -> None:
        self.watch()
        self._queued = []

    def __getattribute__(self, name: str) -> Any:
        queued = object.__getattribute__(self, "_queued")
        if queued is not None and name in _COMMANDS:
            return lambda *args, **kwargs: queued.append((name, args, kwargs))
        return object.__getattribute__(self, name)

    def execute(self) -> list[Any]:
        queued, self._queued = self._queued or [], None
        with self._lock:
            replies = [getattr(self, name)(*args, **kwargs) for name, args, kwargs in queued]
        self._end("COMMIT")
        return replies

    def _end(self, statement: str) -> None:
        if self._open:
            self._open = False
            try:
                self._db.execute(statement)
            finally:
                self._lock.release()

    def __enter__(self) -> Pipeline:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._queued = None
        self._end("ROLLBACK")
