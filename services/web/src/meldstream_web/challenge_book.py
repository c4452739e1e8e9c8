"""Where the gateway keeps challenges (challenges.py): who challenged whom to what, and its one decision.

With Redis (REDIS_URL, which every deployment of several replicas gives its gateways) a challenge is
the key `<prefix>web:challenge:<id>` expiring with it, its decision `<prefix>web:challenge:<id>:decided`
(set once, NX: the first accept, decline or cancel wins on whichever replica it arrives), and each of its
two accounts lists it in the sorted set `<prefix>web:challenges:<account>` by expiry, which the account
event streams read once a second. Without Redis (one gateway, the embedded platform) the same in this
process's memory.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, replace
from typing import Any, Final, Protocol

import redis.asyncio

CREATED: Final = "created"
LISTED: Final = 100  # the newest challenges of an account an event stream reads


@dataclass(frozen=True, slots=True)
class Decision:
    status: str  # accepted, declined or canceled
    reason: str = ""  # a decline's reason (challenges.REASONS)
    game_id: str = ""  # an accepted challenge's game, once its table is full


@dataclass(frozen=True, slots=True)
class Challenge:
    """One challenge; `table_id` is its private table's link token, which only the gateway sees."""

    id: str
    table_id: str
    challenger: str
    challenger_name: str
    challenger_bot: bool
    challenged: str
    variant: str
    options: dict[str, int | bool | str]
    turn_timeout_ms: int
    expires_at: float
    challenged_name: str = ""  # the challenged account's display name when the challenge was made
    time_bank_ms: int | None = None  # each seat's bank; None: the engine's default
    status: str = CREATED
    reason: str = ""
    game_id: str = ""

    def public(self) -> dict[str, Any]:
        """The challenge as its two accounts see it (never the table's link token)."""
        shown = asdict(self)
        del shown["table_id"]
        return shown

    def decided(self, decision: Decision | None) -> Challenge:
        if decision is None:
            return self
        return replace(self, status=decision.status, reason=decision.reason, game_id=decision.game_id)


class ChallengeBook(Protocol):
    async def add(self, challenge: Challenge) -> None: ...

    async def get(self, challenge_id: str) -> Challenge | None:
        """The challenge with its decision, or None (never made, or expired)."""

    async def decide(self, challenge: Challenge, decision: Decision) -> bool:
        """Record the first decision; False when one was recorded already."""

    async def amend(self, challenge: Challenge, decision: Decision | None) -> None:
        """Replace the decision (None: undo it) of the one who took it."""

    async def of_account(self, account: str) -> list[Challenge]:
        """The account's live challenges, made or received (the `LISTED` expiring last)."""

    async def close(self) -> None: ...


class MemoryBook:
    """One gateway's challenges in its memory."""

    def __init__(self) -> None:
        self._challenges: dict[str, Challenge] = {}
        self._decisions: dict[str, Decision] = {}

    def _live(self) -> dict[str, Challenge]:
        now = time.time()
        for gone in [c.id for c in self._challenges.values() if c.expires_at <= now]:
            del self._challenges[gone]
            self._decisions.pop(gone, None)
        return self._challenges

    async def add(self, challenge: Challenge) -> None:
        self._live()[challenge.id] = challenge

    async def get(self, challenge_id: str) -> Challenge | None:
        found = self._live().get(challenge_id)
        return None if found is None else found.decided(self._decisions.get(challenge_id))

    async def decide(self, challenge: Challenge, decision: Decision) -> bool:
        if challenge.id in self._decisions:
            return False
        self._decisions[challenge.id] = decision
        return True

    async def amend(self, challenge: Challenge, decision: Decision | None) -> None:
        if decision is None:
            self._decisions.pop(challenge.id, None)
        else:
            self._decisions[challenge.id] = decision

    async def of_account(self, account: str) -> list[Challenge]:
        mine = [c for c in self._live().values() if account in (c.challenger, c.challenged)]
        return [c.decided(self._decisions.get(c.id)) for c in mine[-LISTED:]]

    async def close(self) -> None:
        return None


class RedisBook:
    """Every replica's challenges in one Redis."""

    def __init__(self, url: str, prefix: str = "") -> None:
        self._redis: Any = redis.asyncio.from_url(url, socket_timeout=2.0)
        self._prefix = f"{prefix}web:challenge"

    def _key(self, challenge_id: str) -> str:
        return f"{self._prefix}:{challenge_id}"

    def _index(self, account: str) -> str:
        return f"{self._prefix}s:{account}"

    @staticmethod
    def _ttl_ms(challenge: Challenge) -> int:
        return max(1, int((challenge.expires_at - time.time()) * 1000))

    async def add(self, challenge: Challenge) -> None:
        ttl = self._ttl_ms(challenge)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.set(self._key(challenge.id), json.dumps(asdict(challenge)), px=ttl)
            for account in (challenge.challenger, challenge.challenged):
                pipe.zadd(self._index(account), {challenge.id: challenge.expires_at})
                pipe.pexpire(self._index(account), ttl, nx=True)  # a new index: its first challenge's
                pipe.pexpire(self._index(account), ttl, gt=True)  # else only ever longer (Redis 7)
            await pipe.execute()

    async def get(self, challenge_id: str) -> Challenge | None:
        found = await self._read([challenge_id])
        return found[0] if found else None

    async def _read(self, ids: list[str]) -> list[Challenge]:
        if not ids:
            return []
        keys = [key for i in ids for key in (self._key(i), self._key(i) + ":decided")]
        values = await self._redis.mget(keys)
        found = []
        for record, decision in zip(values[::2], values[1::2], strict=True):
            if record is not None:
                decided = None if decision is None else Decision(**json.loads(decision))
                found.append(Challenge(**json.loads(record)).decided(decided))
        return found

    async def decide(self, challenge: Challenge, decision: Decision) -> bool:
        key = self._key(challenge.id) + ":decided"
        done = await self._redis.set(key, json.dumps(asdict(decision)), nx=True, px=self._ttl_ms(challenge))
        return bool(done)

    async def amend(self, challenge: Challenge, decision: Decision | None) -> None:
        key = self._key(challenge.id) + ":decided"
        if decision is None:
            await self._redis.delete(key)
        else:
            await self._redis.set(key, json.dumps(asdict(decision)), xx=True, px=self._ttl_ms(challenge))

    async def of_account(self, account: str) -> list[Challenge]:
        index = self._index(account)
        await self._redis.zremrangebyscore(index, "-inf", time.time())
        ids = [i.decode() for i in await self._redis.zrange(index, -LISTED, -1)]
        return await self._read(ids)

    async def close(self) -> None:
        await self._redis.aclose()


def challenge_book(redis_url: str, prefix: str = "") -> ChallengeBook:
    return RedisBook(redis_url, prefix) if redis_url else MemoryBook()
