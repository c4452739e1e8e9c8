"""The single-writer rule for the Kafka log, made real with a lease and fencing token kept in Redis.

Kafka has no conditional append, so before producing, a writer must (1) hold the game's lease, whose
token is bumped on every change of owner, and (2) reserve the next sequence numbers with a
compare-and-set on the game's head, in one Lua script. Another writer cannot take the lease until it
expires or is released, and the lease outlives the producer's delivery timeout, so an old owner's
produce has finished (or failed) before a new owner reads the log tail. A new owner trusts the log,
not Redis: it rescans the partition after the last confirmed position and resets the head (``sync``).
Command ids are recorded after the produce is acknowledged, so a retried command is appended once.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

import redis

from rummy_store.records import LogPosition

_ACQUIRE = """
local lease = redis.call('GET', KEYS[1])
if lease then
  local owner, token = string.match(lease, '^(.*) (%d+)$')
  if owner ~= ARGV[1] then return {0, 0} end
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, tonumber(token)}
end
local token = redis.call('HINCRBY', KEYS[2], 'epoch', 1)
redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. token, 'PX', ARGV[2])
return {2, token}
"""
_SYNC = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[2], 'head', ARGV[2])
return 1
"""
_RESERVE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {'fenced'} end
local done = redis.call('HGET', KEYS[3], ARGV[5])
if done then return {'duplicate', done} end
local head = tonumber(redis.call('HGET', KEYS[2], 'head') or '0')
if head ~= tonumber(ARGV[2]) then return {'stale', tostring(head)} end
redis.call('HSET', KEYS[2], 'head', head + tonumber(ARGV[3]))
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {'ok'}
"""
_CONFIRM = """
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
if tonumber(redis.call('HGET', KEYS[1], 'confirmed_seq') or '0') < tonumber(ARGV[3]) then
  redis.call('HSET', KEYS[1], 'confirmed_seq', ARGV[3], 'confirmed_offset', ARGV[4])
end
return 1
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


@dataclass(frozen=True, slots=True)
class Confirmed:
    """The last appended event the fence knows reached the log; the tail after it must be rescanned."""

    seq: int
    offset: int  # -1 when nothing is confirmed yet


@dataclass(frozen=True, slots=True)
class CommandRecord:
    """Where a command's events went, kept so a retry can answer without appending."""

    first_seq: int
    last_seq: int
    positions: tuple[LogPosition, ...]

    def dumps(self) -> str:
        return json.dumps([self.first_seq, self.last_seq, [[p.partition, p.offset] for p in self.positions]])

    @staticmethod
    def loads(text: str) -> CommandRecord:
        first, last, positions = json.loads(text)
        return CommandRecord(first, last, tuple(LogPosition(p, o) for p, o in positions))


@dataclass(frozen=True, slots=True)
class Reservation:
    """Outcome of a reserve: ``ok``, ``fenced`` (lease lost), ``stale`` (head moved) or ``duplicate``."""

    outcome: str
    head: int = 0
    command: CommandRecord | None = None


class RedisWriterFence:
    """Per-game write leases and sequence reservations in Redis (keys ``{prefix}game:{id}:...``).

    One key space (prefix) belongs to one topic: two topics sharing a prefix would share game heads.
    One fence belongs to one writer: its ``owner`` id is what the lease is held by.
    """

    def __init__(self, client: redis.Redis, prefix: str = "", lease_ms: int = 30_000) -> None:
        self._redis = client
        self._prefix = prefix
        self.lease_ms = lease_ms
        self.owner = uuid.uuid4().hex
        self._acquire = client.register_script(_ACQUIRE)
        self._sync = client.register_script(_SYNC)
        self._reserve = client.register_script(_RESERVE)
        self._confirm = client.register_script(_CONFIRM)
        self._release = client.register_script(_RELEASE)

    def _keys(self, game_id: str) -> tuple[str, str, str]:
        base = f"{self._prefix}game:{game_id}"
        return f"{base}:lease", f"{base}:writer", f"{base}:commands"

    def acquire(self, game_id: str) -> tuple[int, bool] | None:
        """Take or renew the lease: (token, newly acquired) or None when another writer holds it."""
        lease, state, _ = self._keys(game_id)
        held, token = self._acquire(keys=[lease, state], args=[self.owner, self.lease_ms])
        return None if held == 0 else (int(token), held == 2)

    def confirmed(self, game_id: str) -> Confirmed:
        _, state, _ = self._keys(game_id)
        seq, offset = self._redis.hmget(state, ["confirmed_seq", "confirmed_offset"])
        return Confirmed(int(seq or 0), int(offset if offset is not None else -1))

    def sync(self, game_id: str, token: int, head: int) -> bool:
        """Set the head to what the log holds; only the current lease holder may."""
        lease, state, _ = self._keys(game_id)
        return bool(self._sync(keys=[lease, state], args=[f"{self.owner} {token}", head]))

    def reserve(
        self, game_id: str, token: int, expected_seq: int, count: int, command_id: str
    ) -> Reservation:
        lease, state, commands = self._keys(game_id)
        reply = self._reserve(
            keys=[lease, state, commands],
            args=[f"{self.owner} {token}", expected_seq, count, self.lease_ms, command_id],
        )
        outcome = reply[0].decode()
        if outcome == "duplicate":
            return Reservation(outcome, command=CommandRecord.loads(reply[1].decode()))
        return Reservation(outcome, head=int(reply[1]) if outcome == "stale" else 0)

    def confirm(self, game_id: str, command_id: str, record: CommandRecord) -> None:
        """Record an acknowledged append (also used by a new owner for commands found in the log tail)."""
        _, state, commands = self._keys(game_id)
        last = record.positions[-1].offset
        self._confirm(keys=[state, commands], args=[command_id, record.dumps(), record.last_seq, last])

    def release(self, game_id: str, token: int) -> None:
        """Give the lease up (no-op if it already passed to another writer)."""
        lease, _, _ = self._keys(game_id)
        self._release(keys=[lease], args=[f"{self.owner} {token}"])
