"""Games leave memory when nobody uses them, and come back from the stores unchanged on the next call."""

from __future__ import annotations

import asyncio
from pathlib import Path

from rummy_client import RpcFailure
from rummy_engine.app import GameApp
from rummy_engine.config import EngineConfig
from rummy_engine.engine import RunningEngine
from rummy_engine.eviction import Limits, Resident, to_evict
from rummy_engine.stores import open_stores
from rummy_rules.commands import DrawFromStock

from .conftest import People
from .test_service import run

LIMITS = Limits(max_games=2, idle_s=10.0, finished_grace_s=1.0)


def test_finished_games_go_after_the_grace_idle_ones_after_the_idle_time_then_the_lru() -> None:
    games = [
        Resident("old-idle", used=0.0, over=False, pinned=False),
        Resident("ended", used=8.0, over=True, pinned=False),
        Resident("streamed", used=0.0, over=False, pinned=True),
        Resident("a", used=9.0, over=False, pinned=False),
        Resident("b", used=9.5, over=False, pinned=False),
        Resident("c", used=9.8, over=False, pinned=False),
    ]
    # At 10 s: "old-idle" is idle for 10 s, "ended" finished 2 s ago; a pinned game stays however
    # old (and counts towards the cap); then 4 remain for a cap of 2, so the two least recently
    # used unpinned ones go too.
    assert to_evict(games, 10.0, LIMITS) == ["old-idle", "ended", "a", "b"]
    assert to_evict(games[3:], 9.9, LIMITS) == ["a"]
    assert to_evict(games[2:3], 1e9, Limits(0, 0.0, 0.0)) == []


def test_dropped_games_reload_transparently_and_streams_pin_theirs(tmp_path: Path) -> None:
    async def scenario() -> None:
        config = EngineConfig(
            data_dir=str(tmp_path),
            turn_timeout_ms=0,
            max_games=2,
            idle_evict_ms=150,
            finished_grace_ms=150,
        )
        stores = open_stores(config)
        app = GameApp(stores, config)
        try:
            for game_id in ("g1", "g2", "g3"):
                await app.create(game_id, "rummy40", ["a", "b"], {}, 0, requested_by="a")
            assert app.loaded == ["g2", "g3"]  # the cap dropped the least recently used
            before = (await app.game("g3")).state.game

            seat = (await app.game("g1")).state.game.turn  # reloaded from the log
            moved = await app.submit("g1", seat, "draw", DrawFromStock(seat))
            assert (moved.first_seq, moved.last_seq) == (3, 3)
            assert app.loaded == ["g3", "g1"]

            stream = app.watch("g2", 0)
            opening = await anext(stream)
            await asyncio.sleep(0.5)  # well past the idle time: only the streamed game stays
            assert app.loaded == ["g2"]
            assert (await app.game("g3")).state.game == before
            seat = opening.game.turn
            await app.submit("g2", seat, "draw", DrawFromStock(seat))
            update = await asyncio.wait_for(anext(stream), 2.0)
            assert (update.seq, update.event_type) == (opening.seq + 1, "card_drawn")
            await stream.aclose()
        finally:
            await app.close()
            stores.close()

    asyncio.run(scenario())


def test_asking_for_games_that_do_not_exist_leaves_nothing_behind(tmp_path: Path, people: People) -> None:
    async def scenario(engine: RunningEngine) -> None:
        async with people.client(engine.address, people.players[0]) as ann:
            # At once: each is answered no_such_game only after the engine waited GAME_APPEARS_S for it.
            answers = await asyncio.gather(
                *(ann.view(f"nobody-{n}") for n in range(50)), return_exceptions=True
            )
        assert all(isinstance(answer, RpcFailure) and answer.code == "no_such_game" for answer in answers), (
            answers
        )
        assert not engine.app._loading

    run(tmp_path, people, scenario)
