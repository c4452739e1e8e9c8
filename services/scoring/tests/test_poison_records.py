"""Scoring on real Kafka and Redis goes on scoring every game when its topic holds records it cannot
read: a garbage payload and a record of an unknown event format, written by a raw producer with the
usual key and headers between the records of good games, are skipped and counted."""

from __future__ import annotations

import asyncio
import time

import pytest
from kafka import KafkaProducer
from meldstream_benches.scoring import game_events
from rummy_contracts.event_format import SCHEMA_VERSION
from rummy_scoring.config import ScoringConfig
from rummy_scoring.service import start_scoring
from rummy_scoring.store import ScoreReader
from rummy_store.publisher import KafkaPublisher

GAMES = 6


def _raw(
    producer: KafkaProducer, topic: str, game_id: str, seq: int, *, version: int, payload: bytes
) -> None:
    headers = {"event-type": "deal_ended", "schema-version": str(version), "seq": str(seq), "command-id": "x"}
    producer.send(topic, payload, game_id.encode(), [(k, v.encode()) for k, v in headers.items()])


def _write_games_and_poison(kafka: str, topic: str) -> None:
    """Six games' commands in rounds (every game's first command, then every second, ...) with a
    garbage payload under game g0 after the first round and another event format under g1 after the
    second: in each partition they sit between good records of the same and other games."""
    games = [game_events(f"g{i}", i) for i in range(GAMES)]
    publisher = KafkaPublisher(kafka, topic)
    producer = KafkaProducer(bootstrap_servers=kafka)
    try:
        for step in range(3):
            for i, commands in enumerate(games):
                command, events = commands[step]
                publisher.publish(f"g{i}", command, sum(len(e) for _, e in commands[:step]) + 1, events)
            if step == 0:
                _raw(producer, topic, "g0", 3, version=SCHEMA_VERSION, payload=b"\x00not a GameEvent")
            if step == 1:
                _raw(producer, topic, "g1", 4, version=SCHEMA_VERSION + 1, payload=games[1][2][1][0].payload)
        producer.flush()
    finally:
        producer.close()
        publisher.close()


async def _scenario(kafka: str, redis_url: str, prefix: str) -> tuple[list[list[str]], int]:
    config = ScoringConfig(
        address="127.0.0.1:0",
        kafka=kafka,
        redis=redis_url,
        game_topic=f"{prefix}.rummy.game.events.v1",
        matchmaking_topic=f"{prefix}.rummy.matchmaking.events.v1",
        topic=f"{prefix}.rummy.scoring.events.v1",
        key_prefix=f"{prefix}:",
        group=f"{prefix}.scoring",
    )
    _write_games_and_poison(kafka, config.game_topic)
    scoring = await start_scoring(config)
    try:
        reader = ScoreReader(scoring.client, config.key_prefix)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            matches = [reader.match(f"g{i}") for i in range(GAMES)]
            if all(matches) and scoring.handlers.game_skips.count >= 2:
                break
            await asyncio.sleep(0.1)
        winners = [list(m.winners) if m is not None else [] for m in matches]
        return winners, scoring.handlers.game_skips.count
    finally:
        await scoring.stop()


@pytest.mark.integration
def test_a_garbage_payload_and_an_unknown_format_are_skipped_and_every_good_game_scored(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str
) -> None:
    winners, skipped = asyncio.run(_scenario(kafka_bootstrap, redis_url, unique_prefix))
    assert winners == [[f"player-{i * 4 + i % 4}"] for i in range(GAMES)]  # bench: seat i % 4 wins game i
    assert skipped == 2
