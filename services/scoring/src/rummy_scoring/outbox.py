"""The transactional outbox: scoring events leave Redis for Kafka after the effects are committed.

Handlers append each record's scoring events to the outbox list in the same MULTI/EXEC as the effects
and the tracking seq, so a result is never counted without being published, nor published without
being counted. A relay thread sends the outbox in batches (one acknowledgement round per batch) and
trims what was acknowledged; after a crash between the two it sends those again, and consumers of the
scoring topic count a game's result once (matchmaking keeps the latest rating by games played, a
tournament table takes its first result).
"""

from __future__ import annotations

import base64
import json
import logging
import threading
from collections.abc import Sequence
from typing import Any, Final

from rummy.scoring.v1 import scoring_pb2 as sc
from rummy_store import NewEvent
from rummy_store.publisher import Publisher

log = logging.getLogger("rummy_scoring")
BATCH: Final = 500


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


class OutboxRelay:
    """Moves the outbox list at `key` to the publisher; one relay per scoring deployment."""

    def __init__(self, client: Any, key: str, publisher: Publisher, idle_s: float = 0.02) -> None:
        self._r = client
        self._key = key
        self._publisher = publisher
        self._idle = idle_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="scoring-outbox", daemon=True)
        self.sent = 0

    def drain_once(self) -> int:
        """Publish up to BATCH waiting calls and trim them; returns how many were sent."""
        lines = self._r.lrange(self._key, 0, BATCH - 1)
        if not lines:
            return 0
        self._publisher.publish_all([_call(line) for line in lines])
        self._r.ltrim(self._key, len(lines), -1)
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
                if not self.drain_once():
                    self._stop.wait(self._idle)
            except Exception:
                log.exception("outbox relay failed; retrying in 1 s")
                self._stop.wait(1.0)
        try:
            self.drain_once()  # what was committed before the stop
        except Exception:
            log.exception("outbox relay: final drain failed; the next start sends it")
