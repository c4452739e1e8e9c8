"""Identity's records on its log, and the state of the partitions this instance owns.

The log (`rummy.identity.accounts.v1`, compacted; the embedded store's identity.sqlite) is the only
truth: Redis holds nothing of identity's but the owners directory, so FLUSHALL loses no account.
Each record is the whole state of its key (records.proto), appended with the key's last seq as the
expected seq, so a second writer of a partition (a deposed owner) is refused by the log. An owner
folds its partitions once (the last record per key), then changes an account by writing first and
updating memory only once the log acknowledged it. A write that failed may still have landed: the
partition is then folded again before its next use, so memory never runs ahead of, or behind, the log.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from google.protobuf.message import DecodeError, Message
from rummy.identity.v1 import records_pb2 as rec
from rummy_service.errors import Unavailable
from rummy_store import EventLog, StoreError
from rummy_store.records import Append, NewEvent

log = logging.getLogger("rummy_identity")

TOPIC: Final = "rummy.identity.accounts.v1"
FILE: Final = "identity.sqlite"
PARTITIONS: Final = 16
FORMAT: Final = 1
"""The records' format, in each record's `schema-version` header."""
KEYRING: Final = "keyring"
_TYPES: Final[dict[str, type[Message]]] = {
    "name": rec.NameRecord,
    "account": rec.AccountRecord,
    KEYRING: rec.Keyring,
}


def name_key(canonical: str) -> str:
    return f"name:{canonical}"


def account_key(account_id: str) -> str:
    return f"account:{account_id}"


def _type_of(key: str) -> str:
    return key.partition(":")[0]


@dataclass(slots=True)
class Held:
    """A key's last record and its seq (the expected seq of the next write)."""

    seq: int
    record: Message


Folded = dict[str, Held]


class AccountStore:
    """The owned partitions' records in memory, written through the log."""

    def __init__(self, log: EventLog) -> None:
        self.log = log
        self._parts: dict[int, Folded] = {}
        self._locks: dict[int, asyncio.Lock] = {}
        self._stale: set[int] = set()

    @property
    def partitions(self) -> int:
        return self.log.partitions

    @property
    def owned(self) -> set[int]:
        return set(self._parts)

    def partition_of(self, key: str) -> int:
        return self.log.partition_for(key)

    def new_account_id(self, partition: int) -> str:
        """A random id whose record lands in `partition` (its name's), about `partitions` draws."""
        while True:
            candidate = "u" + secrets.token_hex(8)
            if self.partition_of(account_key(candidate)) == partition:
                return candidate

    # --- partitions ---------------------------------------------------------------------------------

    def fold(self, partitions: Iterable[int]) -> dict[int, Folded]:
        """Read each partition to its end: the last record of every key (blocking: run in a thread)."""
        folded: dict[int, Folded] = {}
        for partition in partitions:
            held: Folded = {}
            for record in self.log.read_partition(partition):
                kind = _TYPES.get(record.event_type)
                if kind is None or record.schema_version != FORMAT:
                    log.warning(
                        "partition %d offset %d: %s record of format %d skipped",
                        *(partition, record.position.offset, record.event_type[:40], record.schema_version),
                    )
                    continue
                try:
                    held[record.game_id] = Held(record.seq, kind.FromString(record.payload))
                except DecodeError:
                    log.warning(
                        "partition %d offset %d: undecodable record skipped",
                        partition,
                        record.position.offset,
                    )
            folded[partition] = held
        return folded

    def adopt(self, folded: dict[int, Folded]) -> None:
        for partition, held in folded.items():
            self._parts[partition] = held
            self._locks.setdefault(partition, asyncio.Lock())
            self._stale.discard(partition)

    def drop(self, partitions: Iterable[int]) -> None:
        for partition in partitions:
            self._parts.pop(partition, None)
            self._stale.discard(partition)

    def lock(self, partition: int) -> asyncio.Lock:
        """Held across a read-decide-write of one partition: its writes happen one at a time."""
        return self._locks.setdefault(partition, asyncio.Lock())

    async def fresh(self, partition: int) -> None:
        """Fold a partition again if a write to it failed since (under its lock)."""
        if partition in self._stale and partition in self._parts:
            self.adopt(await asyncio.to_thread(self.fold, [partition]))

    # --- records ------------------------------------------------------------------------------------

    def get(self, key: str) -> Held | None:
        held = self._parts.get(self.partition_of(key))
        if held is None:
            raise Unavailable("not_owner", "this instance does not hold that account's partition")
        return held.get(key)

    def name(self, canonical: str) -> tuple[int, rec.NameRecord | None]:
        held = self.get(name_key(canonical))
        return (held.seq, held.record) if held else (0, None)  # type: ignore[return-value]

    def account(self, account_id: str) -> tuple[int, rec.AccountRecord | None]:
        held = self.get(account_key(account_id))
        return (held.seq, held.record) if held else (0, None)  # type: ignore[return-value]

    def keyring(self) -> tuple[int, rec.Keyring]:
        held = self.get(KEYRING)
        return (held.seq, held.record) if held else (0, rec.Keyring())  # type: ignore[return-value]

    async def write(self, changes: Sequence[tuple[str, int, Message]]) -> None:
        """Append each (key, expected seq, whole record) in one write (one transaction per partition on
        Kafka) and hold the records once acknowledged; UNAVAILABLE if the log refuses or is away."""
        command = uuid.uuid4().hex
        batch = [
            Append(key, command, seq, [NewEvent(_type_of(key), record.SerializeToString(), FORMAT)])
            for key, seq, record in changes
        ]
        answers = await asyncio.to_thread(self.log.append_batch, batch)
        failed = [a for a in answers if isinstance(a, Exception)]
        if failed:
            self._stale.update(self.partition_of(key) for key, _, _ in changes)
            log.warning("a write of %d records failed: %s", len(changes), failed[0])
            raise Unavailable("store_unavailable", "the account store did not take the change: retry")
        for key, seq, record in changes:
            held = self._parts.get(self.partition_of(key))
            if held is not None:
                held[key] = Held(seq + 1, record)


def read_keyring(log: EventLog, partition: int, since: int) -> tuple[int, rec.Keyring | None]:
    """The keyring's last record in `partition` from offset `since`, and the offset to read on from
    (blocking): how an instance that does not own the keyring's partition follows it."""
    found: rec.Keyring | None = None
    offset = since
    for record in log.read_partition(partition, since):
        offset = record.position.offset + 1
        if record.game_id == KEYRING and record.schema_version == FORMAT:
            try:
                found = rec.Keyring.FromString(record.payload)
            except DecodeError:
                continue
    return offset, found


def unavailable(exc: StoreError) -> Unavailable:
    return Unavailable("store_unavailable", f"the account store is away: {exc}")
