"""The transactional outbox: scoring events leave Redis for Kafka after the effects are committed.

Handlers append each record's scoring events to the outbox list in the same MULTI/EXEC as the effects
and the tracking seq, so a result is never counted without being published, nor published without
being counted. A relay thread sends the outbox in batches (one acknowledgement round per batch) and
trims what was acknowledged.

Several scoring instances share one outbox, and each runs a relay. Two relays reading the same head
would publish it twice, and each trimming what it read would drop lines the other never sent. So one
relay at a time holds a lease (a Redis key with the holder's token, renewed at every claim, `LEASE_S`
long): a claim reads the head only for the holder, and a trim removes it only while the lease is still
the trimmer's (both atomic Lua scripts). Only the holder removes lines, always from the head, and
handlers only append, so a trim removes exactly what its holder published.

What can still be published twice: a batch whose holder died (SIGKILL) or stalled past its lease
between the broker's acknowledgement and the trim is sent again by the next holder, up to `LEASE_S`
later. Such a copy is the same record (same key, `seq` header and payload), and consumers of the
scoring topic count a game's result once: matchmaking keeps a player's latest rating by games played
and a tournament table takes its first result; a consumer keeping counts dedupes by (key, seq).

The embedded store (`SqliteKV`) serves one process, so its relay trims without a lease.
"""

from __future__ import annotations

import base64
import json
import logging
import threading
import uuid
from collections.abc import Sequence
from typing import Any, Final

import redis
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy_store import NewEvent
from rummy_store.publisher import Publisher

log = logging.getLogger("rummy_scoring")
BATCH: Final = 500
LEASE_S: Final = 5.0
"""How long a relay holds the outbox after its last claim: how long the results of an instance killed
while holding it wait for another relay, and how long a holder may stall in one publish before another
relay sends its batch again."""
STANDBY_S: Final = 0.5  # how often a relay without the lease asks for it

# KEYS: lease, outbox; ARGV: token, lease ms, last index. The head for the holder, nil for the others.
_CLAIM = """
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return false end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return redis.call('LRANGE', KEYS[2], 0, tonumber(ARGV[3]))
"""
# KEYS: lease, outbox; ARGV: token, lines published. 1 if trimmed, 0 if the lease moved on.
_TRIM = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('LTRIM', KEYS[2], tonumber(ARGV[2]), -1)
return 1
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
"""


def entry(game_id: str, command_id: str, first_seq: int, events: Sequence[sc.ScoringEvent]) -> str:
    """One outbox line: a publish call, JSON with base64 payloads."""
    payloads = [
        [e.WhichOneof("event") or "", base64.b64encode(e.SerializeToString()).decode()] for e in events
    ]
    return json.dumps({"key": game_id, "command": command_id, "first": first_seq, "events": payloads})


def _call(line: bytes) -> tuple[str, str, int, list[NewEvent]]:
    data = json.loads(line)
    events = [NewEvent(kind, base64.b64decode(payload)) for kind, payload in data["events"]]
    return data["key"], data["command"], int(data["first"]), events


class _Outbox:
    """The embedded store's outbox: one process, one relay."""

    def __init__(self, client: Any, key: str) -> None:
        self._r = client
        self._key = key

    def claim(self) -> list[bytes] | None:
        """The head to publish; None while another relay holds the outbox."""
        return list(self._r.lrange(self._key, 0, BATCH - 1))

    def trim(self, sent: int) -> bool:
        """Remove the `sent` lines published; False if they were not ours to remove."""
        self._r.ltrim(self._key, sent, -1)
        return True

    def release(self) -> None:
        """Let another relay take over now, not once the lease runs out."""


class _LeasedOutbox(_Outbox):
    """A Redis outbox that several instances' relays share, one holder at a time."""

    def __init__(self, client: redis.Redis, key: str, lease_s: float) -> None:
        super().__init__(client, key)
        self._keys = [f"{key}:lease", key]
        self._token = uuid.uuid4().hex
        self._lease_ms = int(lease_s * 1000)
        self._claim = client.register_script(_CLAIM)
        self._trim = client.register_script(_TRIM)
        self._release = client.register_script(_RELEASE)

    def claim(self) -> list[bytes] | None:
        head = self._claim(keys=self._keys, args=[self._token, self._lease_ms, BATCH - 1])
        return None if head is None else list(head)

    def trim(self, sent: int) -> bool:
        return bool(self._trim(keys=self._keys, args=[self._token, sent]))

    def release(self) -> None:
        self._release(keys=self._keys, args=[self._token])


class OutboxRelay:
    """Moves the outbox list at `key` to the publisher while it holds the outbox's lease."""

    def __init__(
        self, client: Any, key: str, publisher: Publisher, idle_s: float = 0.02, lease_s: float = LEASE_S
    ) -> None:
        leased = isinstance(client, redis.Redis)
        self._outbox = _LeasedOutbox(client, key, lease_s) if leased else _Outbox(client, key)
        self._publisher = publisher
        self._idle = idle_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="scoring-outbox", daemon=True)
        self.sent = 0

    def drain_once(self) -> int | None:
        """Publish up to BATCH waiting calls and trim them; returns how many were sent, None while
        another relay holds the outbox."""
        lines = self._outbox.claim()
        if not lines:
            return None if lines is None else 0
        self._publisher.publish_all([_call(line) for line in lines])
        if not self._outbox.trim(len(lines)):
            log.warning("outbox lease lost while publishing: the next holder sends %d again", len(lines))
        self.sent += len(lines)
        return len(lines)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                sent = self.drain_once()
                if not sent:
                    self._stop.wait(STANDBY_S if sent is None else self._idle)
            except Exception:
                log.exception("outbox relay failed; retrying in 1 s")
                self._stop.wait(1.0)
        try:
            self.drain_once()  # what was committed before the stop, if this relay holds the outbox
            self._outbox.release()
        except Exception:
            log.exception("outbox relay: final drain failed; the next holder sends it")
