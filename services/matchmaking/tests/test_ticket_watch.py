"""The ticket stream sends every state change, also one made while the consumer holds the last item."""

from __future__ import annotations

import asyncio
from pathlib import Path

from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy_matchmaking.app import MatchmakingApp
from rummy_matchmaking.journal import Journal
from rummy_service.auth import HUMAN, PLAY, WATCH, Principal
from rummy_store.embedded_log import EmbeddedEventLog


def test_watch_sends_a_change_made_while_the_consumer_held_the_queued_state(tmp_path: Path) -> None:
    async def scenario() -> list[int]:
        log = EmbeddedEventLog(tmp_path / "tables.sqlite")
        app = MatchmakingApp(log)
        await app.adopt(range(log.partitions), Journal())
        ann = Principal("ann", frozenset({PLAY, WATCH}), HUMAN, "ann")
        ticket = await app.enqueue(ann, mm.EnqueueRequest(variant="kalooki", min_players=3, max_players=4))
        stream = app.watch(ann, ticket.ticket.ticket_id)
        states = [(await anext(stream)).state]  # QUEUED; the stream is suspended at its yield
        await app.cancel(ann, ticket.ticket.ticket_id)  # changes the ticket before the stream resumes
        states += [status.state async for status in stream]
        log.close()
        return states

    assert asyncio.run(scenario()) == [mm.TICKET_STATE_QUEUED, mm.TICKET_STATE_CANCELLED]
