"""Two engines on one game (Kafka + Redis): the write lease lets one write at a time, the other says so.

Both engines run in this process but share nothing except Kafka and Redis: each has its own
producer, readers and writer-fence identity, as two processes would. While one holds a game's lease
the other answers UNAVAILABLE `not_writer` and appends nothing; once the lease lapses, the other takes
it over, finds the game moved on, rebuilds it from the log and decides again, so the log stays one
gap-free history and a retried command id is never appended twice. An engine that was not the
writer may hold a stale game: a command its stale state refuses is decided again once the fence shows
the game moved on (the second and third submits below depend on that).
"""

from __future__ import annotations

import asyncio

import grpc
import pytest
from rummy.game.v1 import game_service_pb2 as gs
from rummy_client import GameClient, RpcFailure
from rummy_engine.config import EngineConfig
from rummy_engine.engine import start_engine
from rummy_store.kafka_log import KafkaEventLog

from .conftest import token

PLAYERS = ["ann", "bob"]
LEASE_MS = 2_000  # long enough that the first engine still holds it when the second tries
DRAW = gs.Action(draw_from_stock=gs.DrawFromStock())


@pytest.mark.integration
def test_one_engine_writes_a_game_the_other_answers_not_writer(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str
) -> None:
    topic = f"{unique_prefix}.rummy.game.events.v1"

    async def scenario() -> None:
        config = EngineConfig(
            address="127.0.0.1:0",
            kafka=kafka_bootstrap,
            redis=redis_url,
            topic=topic,
            key_prefix=f"{unique_prefix}:",
            lease_ms=LEASE_MS,
            turn_timeout_ms=0,
        )
        first, second = await start_engine(config), await start_engine(config)
        here = {p: GameClient(first.address, token(p), retry_for_s=0) for p in PLAYERS}
        there = {p: GameClient(second.address, token(p), retry_for_s=0) for p in PLAYERS}
        try:
            created = await here["ann"].create_game("rummy40", PLAYERS, "shared")
            mover = PLAYERS[created.view.turn]
            seat = created.view.turn
            # The first engine holds the lease: the second refuses, clearly, and writes nothing.
            with pytest.raises(RpcFailure) as refused:
                await there[mover].submit("shared", seat, DRAW, "draw-1")
            assert refused.value.status is grpc.StatusCode.UNAVAILABLE
            assert refused.value.code == "not_writer"
            drawn = await here[mover].submit("shared", seat, DRAW, "draw-1")
            assert (drawn.first_seq, drawn.duplicate) == (3, False)

            # Once the lease lapses the second engine takes the game over from the log.
            await asyncio.sleep(LEASE_MS * 1.5 / 1000)
            card = drawn.view.hand[0]
            discard = gs.Action(discard=gs.Discard(card=card))
            moved = await there[mover].submit("shared", seat, discard, "discard-1")
            assert (moved.first_seq, moved.duplicate) == (4, False)
            again = await there[mover].submit("shared", seat, DRAW, "draw-1")  # a retry, anywhere
            assert again.duplicate and again.first_seq == 3

            # Now the first engine is the one refused, until the second's lease lapses in turn.
            other = PLAYERS[moved.view.turn]
            turn = moved.view.turn
            with pytest.raises(RpcFailure) as fenced:
                await here[other].submit("shared", turn, DRAW, "draw-2")
            assert fenced.value.code == "not_writer"
            await asyncio.sleep(LEASE_MS * 1.5 / 1000)
            caught_up = await here[other].submit("shared", turn, DRAW, "draw-2")
            assert caught_up.first_seq == 5 and caught_up.view.seq == 5

            log = KafkaEventLog(kafka_bootstrap, topic, config.partitions)
            try:
                records = list(log.read_stream("shared"))
            finally:
                log.close()
            assert [r.seq for r in records] == [1, 2, 3, 4, 5]
            assert [r.command_id for r in records][2:] == ["draw-1", "discard-1", "draw-2"]
        finally:
            for client in (*here.values(), *there.values()):
                await client.close()
            await first.stop()
            await second.stop()

    asyncio.run(scenario())
