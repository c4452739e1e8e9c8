"""ConsumerLoop on the embedded log: a batch handler gets a whole poll, a failed batch is delivered again."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import pytest
from rummy_service.consumer import ConsumerLoop
from rummy_store import EventRecord, NewEvent
from rummy_store.embedded_log import EmbeddedEventLog


def _wait(condition: threading.Event) -> None:
    assert condition.wait(10), "the consumer loop did not get there in 10 s"


def test_a_batch_handler_gets_each_poll_whole_and_a_failed_poll_again() -> None:
    log = EmbeddedEventLog(":memory:", 1)
    for game in ("a", "b"):
        log.append(game, "c", 0, [NewEvent("e", b"1"), NewEvent("e", b"2")])
    calls: list[list[tuple[str, int]]] = []
    done = threading.Event()

    def handle_batch(batch: Sequence[EventRecord]) -> None:
        calls.append([(r.game_id, r.seq) for r in batch])
        if len(calls) == 1:
            raise RuntimeError("store down")  # nothing committed: the same poll comes back
        done.set()

    loop = ConsumerLoop(log, "g", handle_batch=handle_batch)
    loop.start()
    try:
        _wait(done)
        deadline = time.monotonic() + 5
        while loop.records < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        loop.stop()
    whole = [("a", 1), ("a", 2), ("b", 1), ("b", 2)]
    assert calls == [whole, whole] and loop.records == 4
    assert log.committed("g") == {0: 4}
    log.close()


def test_a_loop_takes_one_handler() -> None:
    log = EmbeddedEventLog(":memory:", 1)
    with pytest.raises(ValueError, match="exactly one"):
        ConsumerLoop(log, "g")
    with pytest.raises(ValueError, match="exactly one"):
        ConsumerLoop(log, "g", print, handle_batch=print)
    log.close()
