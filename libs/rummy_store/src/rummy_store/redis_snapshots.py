"""Snapshots in Redis: one hash per game at ``{prefix}game:{id}:snapshot`` (STYLE.md 7.5).

Redis is a cache beside the log, and it may go away or come back empty. A save that fails is logged
(one line) and answered False: writers submit saves and move on, so an exception there would only
surface as an unretrieved-future traceback. A load that fails raises `StoreError`: readers that can do
without (`CatchUpReader`) fold from the log; one that cannot (telling a long-ended game from a new one)
answers "unavailable, retry".
"""

from __future__ import annotations

import logging

import redis

from rummy_store.errors import StoreError
from rummy_store.records import LogPosition
from rummy_store.snapshots import Snapshot, SnapshotStore

# Keep the newest: a slow writer's older snapshot must not replace a newer one.
_SAVE_IF_NEWER = """
local current = redis.call('HGET', KEYS[1], 'seq')
if current and tonumber(current) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'seq', ARGV[1], 'partition', ARGV[2], 'offset', ARGV[3],
           'rules_version', ARGV[4], 'state', ARGV[5])
return 1
"""
log = logging.getLogger("rummy_store")


class RedisSnapshotStore(SnapshotStore):
    def __init__(self, client: redis.Redis, prefix: str = "") -> None:
        self._redis = client
        self._prefix = prefix
        self._save = client.register_script(_SAVE_IF_NEWER)

    def _key(self, game_id: str) -> str:
        return f"{self._prefix}game:{game_id}:snapshot"

    def save(self, snapshot: Snapshot) -> bool:
        s = snapshot
        args: list[bytes | str | int] = [
            s.seq,
            s.position.partition,
            s.position.offset,
            s.rules_version,
            s.state,
        ]
        try:
            return bool(self._save(keys=[self._key(s.game_id)], args=args))
        except redis.RedisError as exc:
            log.warning("snapshot of game %s at seq %d not saved: %s", s.game_id, s.seq, exc)
            return False

    def load(self, game_id: str) -> Snapshot | None:
        try:
            fields: dict[bytes, bytes] = self._redis.hgetall(self._key(game_id))  # type: ignore[assignment]
        except redis.RedisError as exc:
            raise StoreError(f"Redis: {exc}") from exc
        if not fields:
            return None
        position = LogPosition(int(fields[b"partition"]), int(fields[b"offset"]))
        return Snapshot(
            game_id, int(fields[b"seq"]), position, fields[b"rules_version"].decode(), fields[b"state"]
        )

    def delete(self, game_id: str) -> None:
        self._redis.delete(self._key(game_id))

    def close(self) -> None:
        self._redis.close()
