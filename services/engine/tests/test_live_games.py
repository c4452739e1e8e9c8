"""Streams and turn timers keep up with every move, however the engine learnt of it.

Regressions for the platform stall: a game created from a `TableFormed` while a player's stream was
already loading it from the log ended up as two `LiveGame` objects (two locks, two fan-outs, two turn
timers). Moves went to one, the early stream listened to the other and waited for ever, and the stale
timer raced the players ("default action failed: contention" / "not_your_turn"). And a game caught up
from the log (another writer moved it) told its streams nothing and lost its turn timer.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from rummy_engine.app import GameApp
from rummy_engine.config import EngineConfig
from rummy_engine.stores import Stores, open_stores
from rummy_rules.commands import DrawFromStock
from rummy_rules.state import Phase
from rummy_service.errors import NotFound
from rummy_store import EventRecord, LogPosition
from rummy_store.embedded_log import EmbeddedEventLog
from rummy_store.embedded_snapshots import EmbeddedSnapshotStore

LOAD_DELAY_S = 0.3


class SlowReadLog(EmbeddedEventLog):
    """The embedded log with slow reads: a load that starts before an append finishes after it."""

    def read_stream(
        self, game_id: str, from_seq: int = 1, hint: LogPosition | None = None
    ) -> Iterator[EventRecord]:
        time.sleep(LOAD_DELAY_S)
        return super().read_stream(game_id, from_seq, hint)


def test_a_game_loaded_while_it_is_created_stays_one_game(tmp_path: Path) -> None:
    async def scenario() -> None:
        log = SlowReadLog(tmp_path / "events.sqlite", 3)
        stores = Stores(log, EmbeddedSnapshotStore(tmp_path / "snapshots.sqlite"), "slow reads")
        app = GameApp(stores, EngineConfig(data_dir=str(tmp_path), turn_timeout_ms=0))
        try:
            loading = asyncio.create_task(app.game("g1"))  # a player's stream, opened at once
            await asyncio.sleep(0.05)
            created = await app.create("g1", "rummy40", ["a", "b"], {}, 0, requested_by="a")
            stream = app.watch("g1", 0)
            opening = await anext(stream)
            loaded = await loading  # the log already holds the game when this load reads it
            assert loaded is created
            seat = opening.game.turn
            await app.submit("g1", seat, "draw-1", DrawFromStock(seat))
            moved = await asyncio.wait_for(anext(stream), 2.0)
            assert moved.seq == opening.seq + 1
            assert moved.event_type == "card_drawn"
        finally:
            await app.close()
            stores.close()

    asyncio.run(scenario())


class TornReadLog(EmbeddedEventLog):
    """The embedded log read while `torn` as a reader racing an append sees it: first record only."""

    torn = False

    def read_stream(
        self, game_id: str, from_seq: int = 1, hint: LogPosition | None = None
    ) -> Iterator[EventRecord]:
        records = super().read_stream(game_id, from_seq, hint)
        return (r for r in records if r.seq == 1) if self.torn else records


def test_a_game_read_between_started_and_seated_is_not_found_yet(tmp_path: Path) -> None:
    """Seen once in the platform e2e: a view of a game being created answered `bad_seat` (no seats)."""

    async def scenario() -> None:
        log = TornReadLog(tmp_path / "events.sqlite", 3)
        stores = Stores(log, EmbeddedSnapshotStore(tmp_path / "snapshots.sqlite"), "torn reads")
        creator = GameApp(stores, EngineConfig(data_dir=str(tmp_path), turn_timeout_ms=0))
        reader = GameApp(stores, EngineConfig(data_dir=str(tmp_path), turn_timeout_ms=0))
        try:
            await creator.create("g1", "rummy40", ["a", "b"], {}, 0, requested_by="a")
            log.torn = True
            with pytest.raises(NotFound):
                await reader.game("g1")
            log.torn = False  # nothing of the torn read was kept: the next call sees the table
            assert (await reader.game("g1")).state.table.players == ("a", "b")
        finally:
            await creator.close()
            await reader.close()
            stores.close()

    asyncio.run(scenario())


@contextlib.asynccontextmanager
async def two_engines(tmp_path: Path, turn_timeout_ms: int) -> AsyncIterator[tuple[GameApp, GameApp]]:
    """Two apps on one store: the first with the given turn limit, the other (a second writer) without."""
    config = EngineConfig(data_dir=str(tmp_path), turn_timeout_ms=0)
    stores = open_stores(config)
    first = GameApp(stores, replace(config, turn_timeout_ms=turn_timeout_ms))
    other = GameApp(stores, config)
    try:
        yield first, other
    finally:
        await first.close()
        await other.close()
        stores.close()


def test_a_move_found_in_the_log_reaches_the_streams(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with two_engines(tmp_path, 0) as (here, other):
            await here.create("g2", "rummy40", ["a", "b"], {}, 0, requested_by="a")
            stream = here.watch("g2", 0)
            opening = await anext(stream)
            seat = opening.game.turn
            await other.submit("g2", seat, "draw-1", DrawFromStock(seat))  # e.g. an engine's earlier life
            retried = await here.submit("g2", seat, "draw-1", DrawFromStock(seat))
            assert retried.duplicate
            caught_up = await asyncio.wait_for(anext(stream), 2.0)
            assert caught_up.seq == opening.seq + 1
            assert caught_up.game.phase is Phase.PLAY

    asyncio.run(scenario())


def test_a_turn_timer_that_lost_the_race_times_the_next_move(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with two_engines(tmp_path, 300) as (timed, other):
            await timed.create("g3", "rummy40", ["a", "b"], {}, 0, requested_by="a")
            stream = timed.watch("g3", 0)
            opening = await anext(stream)
            seat = opening.game.turn
            # The player draws through another writer before the timer runs out: the timer's draw
            # then finds the game moved on and is refused (already_drawn: the seat must discard).
            await other.submit("g3", seat, "draw-1", DrawFromStock(seat))
            caught_up = await asyncio.wait_for(anext(stream), 2.0)
            assert caught_up.seq == opening.seq + 1
            timed_out = await asyncio.wait_for(anext(stream), 2.0)
            assert timed_out.seq == opening.seq + 2 and timed_out.event_type == "turn_timed_out"
            played = await asyncio.wait_for(anext(stream), 2.0)
            assert played.seq == opening.seq + 3
            assert played.by_timer and played.actor == seat
            assert played.event_type != "card_drawn"

    asyncio.run(scenario())
