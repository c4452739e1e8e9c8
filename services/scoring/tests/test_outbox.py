"""Several relays on one Redis outbox (one per scoring instance): one publishes at a time, every line is
published, and a line is published twice only when its holder stalled past the lease before trimming."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence

import pytest
import redis
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy_scoring.outbox import OutboxRelay, entry
from rummy_store import NewEvent
from rummy_store.publisher import Publisher

pytestmark = pytest.mark.integration
Call = tuple[str, str, int, Sequence[NewEvent]]


class Recorder(Publisher):
    """Keeps what it is asked to publish (the command ids), in order; `gate` runs after each batch."""

    def __init__(self, sent: list[str], gate: Callable[[], None] = lambda: None) -> None:
        self.sent = sent
        self._gate = gate
        self._lock = threading.Lock()

    def publish(self, key: str, command_id: str, first_seq: int, events: Sequence[NewEvent]) -> None:
        self.publish_all([(key, command_id, first_seq, events)])

    def publish_all(self, batch: Sequence[Call]) -> None:
        with self._lock:
            self.sent.extend(command_id for _, command_id, _, _ in batch)
        self._gate()

    def close(self) -> None:
        pass


def _line(n: int) -> str:
    event = sc.ScoringEvent(game_id=f"g{n}", hand_scored=sc.HandScored(deal=1))
    return entry(f"g{n}", f"g{n}/1", 1, [event])


def _until(condition: Callable[[], bool], what: str, limit_s: float = 20) -> None:
    deadline = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {limit_s} s"
        time.sleep(0.01)


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


def test_three_relays_publish_every_line_once(client: redis.Redis, unique_prefix: str) -> None:
    key = f"{unique_prefix}:scoring:outbox"
    sent: list[str] = []
    relays = [OutboxRelay(client, key, Recorder(sent), idle_s=0.001) for _ in range(3)]
    for relay in relays:
        relay.start()
    try:
        for n in range(3000):  # appended while they drain, as handlers do
            client.rpush(key, _line(n))
            if n % 50 == 0:
                time.sleep(0.002)
        _until(lambda: client.llen(key) == 0, "the outbox drained")
    finally:
        for relay in relays:
            relay.stop()
    assert sent == [f"g{n}/1" for n in range(3000)]  # each once, in the outbox's order
    assert sum(1 for relay in relays if relay.sent) == 1  # the lease never moved: one holder sent all
    assert client.exists(f"{key}:lease") == 0  # released at stop


def test_a_holder_stalled_past_its_lease_loses_nothing_and_trims_nothing(
    client: redis.Redis, unique_prefix: str
) -> None:
    key = f"{unique_prefix}:scoring:outbox"
    client.rpush(key, *[_line(n) for n in range(3)])
    stalled, resume = threading.Event(), threading.Event()

    def stall() -> None:  # published, acknowledged, and then a pause longer than the lease
        stalled.set()
        assert resume.wait(20)

    first: list[str] = []
    second: list[str] = []
    holder = OutboxRelay(client, key, Recorder(first, stall), lease_s=0.3)
    other = OutboxRelay(client, key, Recorder(second), lease_s=0.3)
    holder.start()
    try:
        assert stalled.wait(10)
        client.rpush(key, *[_line(n) for n in range(3, 6)])
        other.start()  # takes the lease once it runs out, and sends the whole outbox
        _until(lambda: len(second) == 6 and client.llen(key) == 0, "the other relay drained the outbox")
        other.stop()  # releases the lease
        client.rpush(key, *[_line(n) for n in range(6, 9)])  # sent by nobody yet
        resume.set()  # the stalled holder's trim (3 lines) must not remove them
        _until(lambda: len(first) == 6 and client.llen(key) == 0, "the holder sent the later lines")
    finally:
        resume.set()
        holder.stop()
        other.stop()
    assert second == [f"g{n}/1" for n in range(6)]  # the stalled batch again (the same calls), then on
    assert first == [f"g{n}/1" for n in (0, 1, 2, 6, 7, 8)]
