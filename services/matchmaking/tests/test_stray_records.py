"""A stray record on matchmaking's journal or on scoring's topic stops nothing (issue 12, point 4).

Before, a garbage payload under a journal event type stopped matchmaking from starting, a record of
another format anywhere in the journal refused the whole journal, and a scoring record that did not
parse stopped the ratings behind it. Now each is reported and skipped; only a journal whose oldest
record has another format is an older meldstream's and refused whole.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from kafka import KafkaProducer
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy_matchmaking.config import MatchmakingConfig
from rummy_matchmaking.journal import FORMAT
from rummy_matchmaking.service import start_matchmaking
from rummy_service.auth import HUMAN, PLAY, WATCH, Principal
from rummy_store import NewEvent
from rummy_store.kafka_records import headers
from rummy_store.publisher import KafkaPublisher

FOURS = mm.EnqueueRequest(variant="kalooki", min_players=4, max_players=4)


async def _until(check: Callable[[], bool], what: str) -> None:
    for _ in range(500):
        if check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.integration
def test_stray_records_on_the_journal_and_the_scoring_topic_are_skipped(
    kafka_bootstrap: str, unique_prefix: str
) -> None:
    config = MatchmakingConfig(
        address="127.0.0.1:0",
        kafka=kafka_bootstrap,
        topic=f"{unique_prefix}.rummy.matchmaking.events.v1",
        scoring_topic=f"{unique_prefix}.rummy.scoring.events.v1",
        pairing_interval_ms=20,
    )

    def stray(topic: str, key: str, event_type: str, payload: bytes, version: int) -> None:
        producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
        event = NewEvent(event_type, payload, version)
        for partition in range(config.partitions):  # whichever partition a reader meets first
            producer.send(
                topic,
                key=key.encode(),
                value=payload,
                partition=partition,
                headers=headers(event, 1, "stray"),
            )
        producer.flush()
        producer.close()

    async def scenario() -> None:
        first = await start_matchmaking(config)
        queued = await first.app.enqueue(Principal("ann", frozenset({PLAY, WATCH}), HUMAN, "ann"), FOURS)
        await first.stop()
        stray(config.topic, "stray-1", "ticket_queued", b"\xff\x00 not protobuf", FORMAT)
        stray(config.topic, "stray-2", "ticket_queued", b"", FORMAT + 7)
        stray(config.scoring_topic, "stray-3", "rating_changed", b"\xff\x00 not protobuf", 1)
        rating = sc.ScoringEvent(
            game_id="g1",
            rating_changed=sc.RatingChanged(variant="kalooki", player_id="bob", games=1, ordinal=4.5),
        )
        results = KafkaPublisher(kafka_bootstrap, config.scoring_topic, config.partitions)
        await asyncio.to_thread(
            results.publish, "g1", "rating", 1, [NewEvent("rating_changed", rating.SerializeToString())]
        )
        results.close()

        second = await start_matchmaking(config)  # starts, with the ticket still queued
        try:
            assert second.app.tickets[queued.ticket.ticket_id].state == mm.TICKET_STATE_QUEUED
            await _until(lambda: second.app.rating("kalooki", "bob") == (1, 4.5), "bob's rating")
            assert second.app.skipped == config.partitions  # the scoring strays, one per partition
        finally:
            await second.stop()

    asyncio.run(scenario())
