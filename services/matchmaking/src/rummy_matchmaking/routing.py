"""Where matchmaking's state lives: which partition of its topic holds a queue, a ticket, a tournament.

Pairing only joins tickets of one queue (a variant and a private code), so a queue lives in one
partition (`queue_partition`) and the instance owning that partition pairs it exactly as one instance
would. Every record the owner writes must land in a partition it owns, and every later call must find
that partition again from an id alone: so ids are chosen to hash (Kafka's murmur2, the key of their
records) to their queue's partition. A ticket id is drawn until it does (`new_id`: about one try per
partition, microseconds), a queue table's game id is derived from its tickets with the smallest suffix
that does (`table_game_id`: a retried table is the same game), and a tournament's tables are written
under the tournament's id. Ids of an older meldstream keep hashing where their records already are.
"""

from __future__ import annotations

import hashlib
import uuid

from rummy_store.partitioning import partition_for


def queue_partition(variant: str, private_code: str, partitions: int, casual: bool = False) -> int:
    """The partition of a queue: every ticket that may sit with another lives in the same one (a
    casual queue of a variant is a queue of its own; a private code's is always casual)."""
    key = f"queue\x1f{variant}\x1f{private_code}"
    return partition_for(key + ("\x1fcasual" if casual and not private_code else ""), partitions)


def new_id(prefix: str, partition: int, partitions: int, hex_digits: int = 32) -> str:
    """A fresh random id whose records land in `partition`."""
    while True:
        candidate = prefix + uuid.uuid4().hex[:hex_digits]
        if partition_for(candidate, partitions) == partition:
            return candidate


def table_game_id(ticket_ids: list[str], partition: int, partitions: int) -> str:
    """The game id of a queue table: a function of its tickets (the same table is the same game), with
    the first suffix that puts it in `partition` (none when the plain digest lands there, as before)."""
    ids = ",".join(ticket_ids)
    suffix = 0
    while True:
        seed = ids if suffix == 0 else f"{ids}#{suffix}"
        candidate = "mm-" + hashlib.sha256(seed.encode()).hexdigest()[:24]
        if partition_for(candidate, partitions) == partition:
            return candidate
        suffix += 1
