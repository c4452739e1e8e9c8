"""Keeps this instance's copy of the keyring current, and rotates it where this instance owns it.

The keyring is one key of one partition. Its owner makes the first key and the next ones when they
are due (`keys.needs_rotation`), and answers RotateSigningKey; every other instance reads that
partition's new records, so all of them sign with the same key and publish the same set. Checked
every `max_age_s` (a quarter of the publishing lead), so a new key is known everywhere, verifiers
included, before it signs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from rummy.identity.v1 import records_pb2 as rec

from rummy_identity import keys
from rummy_identity.accounts import Accounts
from rummy_identity.keys import KeyPolicy, Sealer
from rummy_identity.store import KEYRING, read_keyring

log = logging.getLogger("rummy_identity")


class KeyKeeper:
    def __init__(
        self, accounts: Accounts, sealer: Sealer, policy: KeyPolicy, clock: Callable[[], float] = time.time
    ) -> None:
        self._accounts = accounts
        self._store = accounts.store
        self._sealer = sealer
        self._policy = policy
        self._clock = clock
        self._partition = accounts.keyring_partition()
        self._offset = 0
        self._task: asyncio.Task[None] | None = None

    @property
    def owner(self) -> bool:
        return self._partition in self._store.owned

    async def rotate(self, *, force: bool = False) -> rec.SigningKey | None:
        """On the keyring's owner: a new key when one is due (or `force`); the key added, if any."""
        async with self._store.lock(self._partition):
            await self._store.fresh(self._partition)
            seq, ring = self._store.keyring()
            now = int(self._clock())
            if not force and not keys.needs_rotation(ring, now, self._policy):
                self._accounts.keyring = keys.pruned(ring, now, self._policy)
                return None
            new = keys.rotated(ring, self._sealer, now, self._policy)
            await self._store.write([(KEYRING, seq, new)])
            self._accounts.keyring = new
        added = max(new.keys, key=lambda k: k.created_at)
        log.info("signing key %s published, signs from %d", added.kid, added.signs_from)
        return added

    async def refresh(self) -> None:
        """Bring this instance's keyring up to date (the owner from memory, others from the log)."""
        if self.owner:
            await self.rotate()
            return
        self._offset, found = await asyncio.to_thread(
            read_keyring, self._store.log, self._partition, self._offset
        )
        if found is not None:
            for key in found.keys:  # fails loudly at once if this instance has another key secret
                self._sealer.open(key.sealed_private, key.kid)
            self._accounts.keyring = keys.pruned(found, int(self._clock()), self._policy)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while True:
            try:
                await self.refresh()
            except Exception:
                log.exception("keeping the keyring current failed; trying again")
            await asyncio.sleep(self._policy.max_age_s)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def reset(self) -> None:
        """After the keyring's partition moved away: read it from the log's start again."""
        self._offset = 0
