"""The engine creates a game from matchmaking's TableFormed once, however often it is delivered."""

from __future__ import annotations

import asyncio
from pathlib import Path

from rummy_engine.config import EngineConfig
from rummy_engine.engine import start_engine
from rummy_matchmaking.app import table_event
from rummy_store import NewEvent
from rummy_store.embedded_log import EmbeddedEventLog
from rummy_store.publisher import EmbeddedPublisher


async def _scenario(tmp_path: Path) -> tuple[list[str], int, list[str]]:
    tables_file = tmp_path / "matchmaking" / "tables.sqlite"
    config = EngineConfig(address="127.0.0.1:0", data_dir=str(tmp_path / "engine"), tables=str(tables_file))
    engine = await start_engine(config)
    publisher = EmbeddedPublisher(EmbeddedEventLog(tables_file, config.partitions))
    try:
        formed = table_event("t-1", "rummy40", ["ann", "bob", "cy"], {"deals_per_match": 1})
        other = table_event("t-1", "rummy40", ["ann", "bob", "dee"], {})  # same id, another table
        bad = table_event("t-2", "no-such-variant", ["ann", "bob"], {})
        for index, (seq, event) in enumerate([(1, formed), (2, formed), (3, other), (1, bad)]):
            payload = NewEvent("table_formed", event.SerializeToString())
            await asyncio.to_thread(publisher.publish, event.game_id, f"c{index}", seq, [payload])
        assert engine.tables is not None
        for _ in range(200):
            if engine.tables.handled >= 4:
                break
            await asyncio.sleep(0.05)
        history = await engine.app.history("t-1")
        return [record.event_type for record, _, _ in history], engine.tables.created, engine.tables.refused
    finally:
        publisher.close()
        await engine.stop()


def test_a_redelivered_table_makes_one_game_and_a_bad_table_none(tmp_path: Path) -> None:
    types, created, refused = asyncio.run(_scenario(tmp_path))
    assert types == ["game_started", "table_seated"]
    assert created == 2  # the first delivery and the redelivery answer the same game
    assert sorted(refused) == ["t-1", "t-2"]  # another table under an existing id; an unknown variant
