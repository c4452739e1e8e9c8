"""Polling, committing and retrying a consumer group: services' handlers never touch the Kafka client.

Each subscription runs on its own thread: poll a batch, hand it to its handler (each record in turn, or
the whole poll at once to a batch handler that can apply it in fewer store round trips), commit the
batch. A handler failure leaves the batch uncommitted and retries it after a pause, from a new member
that starts at the group's committed offsets; the tracking records make the records already applied
no-ops.

Several instances share a group, and partitions move while a batch is applied (an instance joins, or one
is killed and its session ends). With the classic protocol a member gives partitions up only inside a
poll, so a rebalance waits for the batch being applied and its commit, which the broker still takes in
the old generation. Only a member thrown out of the group while applying (its session or poll interval
ran out: a paused or starved process) commits after its partitions moved: the broker refuses that
commit, this loop rejoins at the committed offsets, and the partitions' new owner reads the batch again:
no-ops, by the tracking records. An instance killed between its store transaction and its commit is the
same case. Nothing is lost, nothing counts twice.

Each loop counts the records it applied (`rummy_consumer_records_total`) and, every LAG_EVERY_S, how far
behind it is (`rummy_consumer_lag_records`): after a poll that found nothing, 0; else the end offset of
each partition it read from since the last measure, less the offset after its last record there. Only
those partitions: a partition that moved to another member stops counting here, and no end offset is
asked for on each poll. A catch-up that has not reached some partitions yet shows only the ones it
reads (a lower bound), and on a transactional topic a commit marker can add one offset a partition.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from rummy_service.metrics import CONSUMED, CONSUMER_LAG

if (
    TYPE_CHECKING
):  # the loop only calls `subscribe` and `end_offset`; rummy_service does not depend on rummy_store
    from rummy_store import EventLog, EventRecord

log = logging.getLogger("rummy_service")
LAG_EVERY_S = 5.0


class ConsumerLoop:
    """Feeds one consumer group's records to `handle` (one record a call) or `handle_batch` (one poll a
    call) until stopped; counts what it applied. `name` labels its metrics (default: the group)."""

    def __init__(
        self,
        events: EventLog,
        group: str,
        handle: Callable[[EventRecord], object] | None = None,
        *,
        handle_batch: Callable[[Sequence[EventRecord]], object] | None = None,
        name: str = "",
    ) -> None:
        if handle is not None and handle_batch is None:
            handle_batch = _each(handle)
        elif handle is not None or handle_batch is None:
            raise ValueError("ConsumerLoop takes exactly one of handle and handle_batch")
        self._events = events
        self._group = group
        self._handle_batch = handle_batch
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"consume-{group}", daemon=True)
        self.records = 0
        self.last_applied_at = 0.0
        self._consumed = CONSUMED.labels(name or group)
        self._lag = CONSUMER_LAG.labels(name or group)
        self._next: dict[int, int] = {}  # partition -> offset after its last record applied, this measure
        self._measured_at = 0.0

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
                        if batch:
                            self._handle_batch(batch)
                            self.records += len(batch)
                            subscription.commit()
                            self.last_applied_at = time.time()
                            self._consumed.inc(len(batch))
                            for record in batch:
                                self._next[record.position.partition] = record.position.offset + 1
                        if time.monotonic() - self._measured_at >= LAG_EVERY_S:
                            self._measure(caught_up=not batch)
            except Exception:
                log.exception("consumer %s failed; rejoining in 1 s", self._group)
                self._stop.wait(1.0)

    def _measure(self, caught_up: bool) -> None:
        """Set the lag gauge (see the module's docstring); a failed end offset leaves it as it was."""
        self._measured_at = time.monotonic()
        read, self._next = self._next, {}
        if caught_up:
            self._lag.set(0)
            return
        try:
            behind = sum(max(0, self._events.end_offset(p) - after) for p, after in read.items())
        except Exception as exc:  # the log is away: the loop's own poll will say so
            log.debug("consumer lag not measured: %s", exc)
            return
        self._lag.set(behind)


def _each(handle: Callable[[EventRecord], object]) -> Callable[[Sequence[EventRecord]], None]:
    def handle_batch(batch: Sequence[EventRecord]) -> None:
        for record in batch:
            handle(record)

    return handle_batch
