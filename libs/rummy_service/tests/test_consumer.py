"""ConsumerLoop: a batch handler gets a whole poll, a failed batch is delivered again (embedded log); a
member joining while a batch is applied moves nothing before that batch is committed (Kafka)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence

import pytest
from kafka import KafkaAdminClient
from rummy_service.consumer import ConsumerLoop
from rummy_store import EventRecord, NewEvent
from rummy_store.embedded_log import EmbeddedEventLog
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.publisher import KafkaPublisher


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


@pytest.mark.integration
def test_a_rebalance_waits_for_the_batch_being_applied(
    kafka_bootstrap: str, unique_prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A member joins while the loop applies a batch: the group rebalances, yet the batch's commit is
    taken (no failure, no rejoin); every record is applied, and the group's offsets reach the end."""
    topic, group = f"{unique_prefix}.consumer", f"{unique_prefix}.group"
    publisher = KafkaPublisher(kafka_bootstrap, topic, 2)
    for game in ("a", "b", "c", "d"):
        publisher.publish(game, "c", 1, [NewEvent("e", b"1"), NewEvent("e", b"2")])
    publisher.close()
    log = KafkaEventLog(kafka_bootstrap, topic, 2)
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    applied: list[tuple[str, int]] = []
    joining = threading.Event()

    def rebalancing() -> bool:
        return bool(admin.describe_groups([group])[group]["group_state"] == "PreparingRebalance")

    def handle_batch(batch: Sequence[EventRecord]) -> None:
        if not applied:  # the first batch: another member asks to join before it is committed
            joining.set()
            deadline = time.monotonic() + 30
            while not rebalancing():
                assert time.monotonic() < deadline, "the second member did not start a rebalance"
                time.sleep(0.05)
        applied.extend((r.game_id, r.seq) for r in batch)

    loop = ConsumerLoop(log, group, handle_batch=handle_batch)
    other: list[tuple[str, int]] = []
    stop = threading.Event()

    def second_member() -> None:
        _wait(joining)
        with log.subscribe(group) as member:
            while not stop.is_set():
                other.extend((r.game_id, r.seq) for r in member.poll(0.2))
                member.commit()

    thread = threading.Thread(target=second_member)
    caplog.set_level(logging.WARNING, "rummy_service")
    loop.start()
    thread.start()
    try:
        everything = {(g, s) for g in "abcd" for s in (1, 2)}
        deadline = time.monotonic() + 60
        while set(applied) | set(other) != everything:
            assert time.monotonic() < deadline, (applied, other, caplog.messages)
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join(30)
        loop.stop()
    assert not [r.getMessage() for r in caplog.records if r.name == "rummy_service"]  # commit taken
    ends = {p: log.end_offset(p) for p in range(2)}
    committed = admin.list_group_offsets({group: None})[group]
    admin.close()
    log.close()
    assert {tp.partition: meta.offset for tp, meta in committed.items()} == ends
