"""Group commit: appends from every game queue on the event loop and go to the log in batches.

One flusher per commit unit (on Kafka a fence group of partitions, `EventLog.commit_unit`) hands
everything queued for it to `EventLog.append_batch` (on Kafka one transaction over the group's
partitions: one produce request, one commit, one wait for acks=all) and answers each append from the
batch's answers; the next batch forms while one is in flight. An append is answered only after its
events are acknowledged, and a failed batch fails each of its appends (clients retry with the same
command ids). No thread is held per append: one pool call per batch.

Batches of all units share IN_FLIGHT slots. A Kafka transaction costs the engine about as much CPU
for one append as for twenty (kafka-python 2-3 ms on this box), and with a flusher per fence group
(8 of them at 64 partitions) each went alone: about one transaction per two actions, and more at 64
partitions than at 3. A flusher waiting for a slot gathers what arrives meanwhile, so under load a
transaction carries more appends; at low load a slot is free and nothing waits. A batch that holds its
slot past SLOT_HOLD_S (a broker gone, a leader moving) gives it up, so a stuck group never holds back
the others.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor

from rummy_store import AppendResult, EventLog, StoreError
from rummy_store.records import Append

MAX_BATCH = 500  # appends per batch: bounds one transaction's size and the wait of its first append
IN_FLIGHT = 2  # batches written at once, over every commit unit
SLOT_HOLD_S = 0.1  # a batch slower than this stops counting against IN_FLIGHT


class GroupCommitter:
    def __init__(self, log: EventLog, pool: Executor, in_flight: int = IN_FLIGHT) -> None:
        self._log = log
        self._pool = pool
        self._slots = asyncio.Semaphore(in_flight)
        self._queued: dict[int, list[tuple[Append, asyncio.Future[AppendResult]]]] = {}
        self._flushers: dict[int, asyncio.Task[None]] = {}
        self.batches = 0  # batches written, and appends in them: the mean batch size for benchmarks
        self.appends = 0
        self.on_batch: Callable[[int, float], object] = lambda appends, seconds: None  # metrics' hook

    async def append(self, append: Append) -> AppendResult:
        """The append's result once its batch is acknowledged; raises the store's error for it."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[AppendResult] = loop.create_future()
        unit = self._log.commit_unit(append.game_id)
        self._queued.setdefault(unit, []).append((append, future))
        if unit not in self._flushers:
            self._flushers[unit] = loop.create_task(self._flush(unit))
        return await future  # a caller that gives up leaves its append in the batch: a retry finds it

    async def _flush(self, unit: int) -> None:
        try:
            while unit in self._queued:
                await self._slots.acquire()
                await self._write(unit)  # releases the slot
        finally:
            del self._flushers[unit]

    async def _write(self, unit: int) -> None:
        """Write what is queued for `unit` now (up to MAX_BATCH), holding a slot taken by the caller."""
        loop = asyncio.get_running_loop()
        held = True

        def release() -> None:
            nonlocal held
            if held:
                held = False
                self._slots.release()

        slow = loop.call_later(SLOT_HOLD_S, release)
        try:
            queued = self._queued.pop(unit)  # taken only now: what arrived while waiting for the slot
            batch, rest = queued[:MAX_BATCH], queued[MAX_BATCH:]
            if rest:
                self._queued[unit] = rest
            answers: Sequence[AppendResult | Exception]
            began = time.perf_counter()
            try:
                answers = await loop.run_in_executor(
                    self._pool, self._log.append_batch, [append for append, _ in batch]
                )
            except Exception as exc:  # the store call itself failed: so did every append of it
                answers = [StoreError(f"append failed ({exc!r}): retry with the same command id")] * len(
                    batch
                )
        finally:
            slow.cancel()
            release()
        self.batches += 1
        self.appends += len(batch)
        self.on_batch(len(batch), time.perf_counter() - began)
        for (_, future), answer in zip(batch, answers, strict=True):
            if future.done():
                continue
            if isinstance(answer, BaseException):
                future.set_exception(answer)
            else:
                future.set_result(answer)
