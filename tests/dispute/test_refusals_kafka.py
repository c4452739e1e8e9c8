"""The refusal stream on Kafka: what one engine records for a game is read back, in order, by the
replay's reader, and a second recorder of the same game appends after the first instead of losing one."""

from __future__ import annotations

import time

import pytest
from google.protobuf import json_format
from rummy.game.v1 import game_service_pb2 as gs
from rummy_engine import refusals
from rummy_store.kafka_log import KafkaEventLog


def _refusal(seat: int, at: float) -> dict[str, object]:
    action = gs.Action(draw_from_stock=gs.DrawFromStock())
    return refusals.refusal(
        game_id="g1",
        seat=seat,
        player=f"p{seat}",
        at=at,
        after_seq=7,
        command_id=f"c{seat}",
        action=action,
        code="not_your_turn",
        message="it is seat 0's turn",
    )


@pytest.mark.integration
def test_refusals_recorded_by_two_writers_are_read_back_in_order(
    kafka_bootstrap: str, unique_prefix: str
) -> None:
    topic = refusals.topic_of(f"{unique_prefix}.rummy.game.events.v1")
    # Two engines that owned the game one after the other (each claim fences the other), and a reader.
    first = KafkaEventLog(kafka_bootstrap, topic, 3, writer=True)
    second = KafkaEventLog(kafka_bootstrap, topic, 3, writer=True)
    reader = KafkaEventLog(kafka_bootstrap, topic, 3)
    try:
        refusals.record(first, _refusal(1, 1_800_000_000.0))
        refusals.record(second, _refusal(2, 1_800_000_001.5))
        refusals.record(first, _refusal(1, 1_800_000_002.0))
        # A commit is answered once decided; its marker, which makes it visible to a read_committed
        # reader, lands a moment later: read until all three show (a lost one never does).
        deadline = time.monotonic() + 30
        while len(read := refusals.read(reader, "g1")) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        for log in (first, second, reader):
            log.close()
    assert [(r["seat"], r["time"]) for r in read] == [
        (1, "2027-01-15T08:00:00.000Z"),
        (2, "2027-01-15T08:00:01.500Z"),
        (1, "2027-01-15T08:00:02.000Z"),
    ]
    assert json_format.ParseDict(read[0]["action"], gs.Action()).HasField("draw_from_stock")
    assert read[0]["code"] == "not_your_turn" and read[0]["after_seq"] == 7
