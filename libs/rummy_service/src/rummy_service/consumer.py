"""Polling, committing and retrying a consumer group: services' handlers never touch the Kafka client.

Each subscription runs on its own thread: poll a batch, hand each record to its handler, commit the
batch. A handler failure leaves the batch uncommitted and retries it after a pause; the tracking records
make the records already applied no-ops.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the loop only calls `subscribe`; rummy_service does not depend on rummy_store
    from rummy_store import EventLog, EventRecord

log = logging.getLogger("rummy_service")


class ConsumerLoop:
    """Feeds one consumer group's records to `handle` until stopped; counts what it applied."""

    def __init__(self, events: EventLog, group: str, handle: Callable[[EventRecord], object]) -> None:
        self._events = events
        self._group = group
        self._handle = handle
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"consume-{group}", daemon=True)
        self.records = 0
        self.last_applied_at = 0.0

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                with self._events.subscribe(self._group) as subscription:
                    while not self._stop.is_set():
                        batch = subscription.poll(0.5)
                        for record in batch:
                            self._handle(record)
                            self.records += 1
                        if batch:
                            subscription.commit()
                            self.last_applied_at = time.time()
            except Exception:
                log.exception("consumer %s failed; rejoining in 1 s", self._group)
                self._stop.wait(1.0)
