"""Each account's muted accounts, kept in the store's key-value store (Redis beside Kafka, or the
embedded file), so a mute follows the person to any replica and across sign-ins."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Final

from rummy_store.locations import KeyValue

MAX_MUTED: Final = 500
CACHED_S: Final = 2.0  # how stale a stream's copy of a mute list may be (a mute at another replica)


class Mutes:
    def __init__(self, kv: KeyValue, prefix: str = "") -> None:
        self._kv = kv
        self._prefix = prefix
        self._cache: dict[str, tuple[float, frozenset[str]]] = {}

    def _key(self, account: str) -> str:
        return f"{self._prefix}chat:mutes:{account}"

    def _read(self, account: str) -> frozenset[str]:
        raw = self._kv.get(self._key(account))
        return frozenset(json.loads(raw)) if raw else frozenset()

    async def of(self, account: str, *, fresh: bool = False) -> frozenset[str]:
        """The accounts `account` muted (as read up to `CACHED_S` ago unless `fresh`)."""
        held = self._cache.get(account)
        if held is not None and not fresh and time.monotonic() - held[0] < CACHED_S:
            return held[1]
        muted = await asyncio.to_thread(self._read, account)
        self._cache[account] = (time.monotonic(), muted)
        return muted

    async def set(self, account: str, other: str, muted: bool) -> frozenset[str]:
        """Mute or unmute `other` for `account`; the new list. Over `MAX_MUTED`: ValueError."""

        def change() -> frozenset[str]:
            current = self._read(account)
            new = current | {other} if muted else current - {other}
            if len(new) > MAX_MUTED:
                raise ValueError(f"at most {MAX_MUTED} muted accounts")
            self._kv.set(self._key(account), json.dumps(sorted(new)))
            return new

        new = await asyncio.to_thread(change)
        self._cache[account] = (time.monotonic(), new)
        return new
