"""A store an older meldstream wrote is refused at start with one message that says what to do; one
record of another event format among a game's records is skipped with the short form of that message."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

import pytest
from rummy.game.v1 import events_pb2
from rummy_contracts.event_format import SCHEMA_VERSION, Logged, OtherEventFormat, envelope, event_type
from rummy_contracts.facts import TableSeated
from rummy_contracts.projection import GameProjection
from rummy_engine.config import EngineConfig
from rummy_engine.engine import start_engine
from rummy_infra.serving import refused_at_start
from rummy_rules import bots
from rummy_rules.simulate import simulate
from rummy_store import EventRecord, LogPosition, NewEvent
from rummy_store.catch_up import CatchUpReader
from rummy_store.embedded_log import EmbeddedEventLog

OLD_TABLE_COMMAND = 'table:{"players": ["ann", "bob"], "turn_timeout_ms": 0}'  # format 1's first command


def write_format_1_game(data_dir: Path) -> None:
    """A game as meldstream wrote it before TableSeated: players in the command id, schema version 1."""
    data_dir.mkdir(parents=True, exist_ok=True)
    envelope = events_pb2.GameEvent(game_id="old", seq=1, command_id=OLD_TABLE_COMMAND, schema_version=1)
    with EmbeddedEventLog(data_dir / "events.sqlite", 3) as log:
        log.append("old", OLD_TABLE_COMMAND, 0, [NewEvent("game_started", envelope.SerializeToString(), 1)])


def test_an_older_store_is_refused_before_serving_and_left_as_it_was(tmp_path: Path) -> None:
    assert SCHEMA_VERSION == 2
    write_format_1_game(tmp_path)
    with pytest.raises(OtherEventFormat) as refused:
        asyncio.run(start_engine(EngineConfig(address="127.0.0.1:0", data_dir=str(tmp_path))))
    message = str(refused.value)
    assert "older meldstream (event format 1; this one reads format 2)" in message
    assert str(tmp_path.resolve()) in message and "--data-dir" in message and "ENGINE_TOPIC" in message
    with EmbeddedEventLog(tmp_path / "events.sqlite", 3) as log:
        assert [r.seq for r in log.read_stream("old")] == [1]


def test_the_engine_process_exits_with_that_message_alone(tmp_path: Path) -> None:
    write_format_1_game(tmp_path)
    stderr = refused_at_start(
        "rummy_engine", {"ENGINE_DATA_DIR": str(tmp_path), "ENGINE_ADDRESS": "127.0.0.1:0"}
    )
    assert stderr.strip().endswith("new --topic / ENGINE_TOPIC.")
    assert "older meldstream (event format 1" in stderr


def test_a_record_of_another_format_in_a_game_is_skipped_and_the_game_folds(tmp_path: Path) -> None:
    """Catch-up refuses a whole store of another format at start (above); a stray record of one among a
    game's records (another writer on the topic) is skipped with the reason, header or envelope."""
    seed = hashlib.sha256(b"stray").digest()
    started = simulate("rummy40", 2, seed, bots.greedy, max_decisions=1).events[0]
    seated = TableSeated(("ann", "bob"), 0, (), "ann")

    def record(seq: int, event: Logged, header: int, inside: int, offset: int) -> EventRecord:
        message = envelope("g", seq, f"c{seq}", event, 0.0)
        message.schema_version = inside
        payload = message.SerializeToString()
        return EventRecord("g", seq, f"c{seq}", event_type(event), header, payload, LogPosition(0, offset))

    records = [
        record(1, started, SCHEMA_VERSION, SCHEMA_VERSION, 0),
        record(2, seated, SCHEMA_VERSION + 1, SCHEMA_VERSION, 1),  # the header says another format
        record(2, seated, SCHEMA_VERSION, SCHEMA_VERSION + 1, 2),  # the envelope does
        record(2, seated, SCHEMA_VERSION, SCHEMA_VERSION, 3),
    ]
    with EmbeddedEventLog(tmp_path / "events.sqlite", 3) as log:
        steps = list(CatchUpReader(log, GameProjection()).steps("g", records))
    reason = f"cannot apply it: ValueError: event format 3; this meldstream reads format {SCHEMA_VERSION}"
    assert [step.skipped for step in steps] == ["", reason, reason, ""]
    final = steps[-1].state
    assert final is not None and final.table.players == ("ann", "bob")
