"""A consumer loop's records and lag, as Prometheus reads them (embedded log: no server needed)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import pytest
from prometheus_client import REGISTRY
from rummy_service import consumer
from rummy_service.consumer import ConsumerLoop
from rummy_store import EventRecord, NewEvent
from rummy_store.embedded_log import EmbeddedEventLog


def _sample(name: str, consumer_name: str) -> float | None:
    return REGISTRY.get_sample_value(name, {"consumer": consumer_name})


def _until(condition: threading.Event) -> None:
    assert condition.wait(10), "the consumer loop did not get there in 10 s"


def test_lag_is_what_remains_to_the_end_while_behind_and_zero_once_caught_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(consumer, "LAG_EVERY_S", 0.0)  # measured after every poll
    log = EmbeddedEventLog(":memory:", 1)
    for game in range(30):  # 1500 records in one partition: a first poll of 1000 leaves 500 behind
        log.append(f"g{game}", "c", 0, [NewEvent("e", b"x")] * 50)
    polls: list[int] = []
    second_poll, go_on = threading.Event(), threading.Event()

    def handle_batch(batch: Sequence[EventRecord]) -> None:
        polls.append(len(batch))
        if len(polls) == 2:
            second_poll.set()
            _until(go_on)

    loop = ConsumerLoop(log, "lag-test", handle_batch=handle_batch, name="lag-test")
    loop.start()
    try:
        _until(second_poll)  # the first poll is applied and measured: 500 records still to read
        assert polls == [1000, 500]
        assert _sample("rummy_consumer_lag_records", "lag-test") == 500
        assert _sample("rummy_consumer_records_total", "lag-test") == 1000
        go_on.set()
        deadline = time.monotonic() + 10
        while _sample("rummy_consumer_lag_records", "lag-test") != 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _sample("rummy_consumer_lag_records", "lag-test") == 0  # a poll found nothing
        assert _sample("rummy_consumer_records_total", "lag-test") == 1500
    finally:
        go_on.set()
        loop.stop()
        log.close()
