"""A journal an older meldstream wrote is refused at start with one message that says what to do."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy_infra.serving import refused_at_start
from rummy_matchmaking.config import MatchmakingConfig
from rummy_matchmaking.journal import FORMAT, OtherJournalFormat
from rummy_matchmaking.service import start_matchmaking
from rummy_store import NewEvent
from rummy_store.embedded_log import EmbeddedEventLog


def write_format_1_journal(data_dir: Path) -> None:
    """A queued ticket as matchmaking wrote it before the journal had a format (header default 1)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    queued = mm.TicketQueued(ticket_id="t1", owner="ann", variant="kalooki", player_ids=["ann"])
    payload = mm.MatchmakingEvent(game_id="t1", ticket_queued=queued).SerializeToString()
    with EmbeddedEventLog(data_dir / "tables.sqlite", 3) as log:
        log.append("t1", "queued", 0, [NewEvent("ticket_queued", payload)])


def test_an_older_journal_is_refused_before_serving_and_left_as_it_was(tmp_path: Path) -> None:
    assert FORMAT == 2
    write_format_1_journal(tmp_path)
    config = MatchmakingConfig(address="127.0.0.1:0", data_dir=str(tmp_path))
    with pytest.raises(OtherJournalFormat) as refused:
        asyncio.run(start_matchmaking(config))
    message = str(refused.value)
    assert "older meldstream (matchmaking journal format 1; this one reads format 2)" in message
    assert str((tmp_path / "tables.sqlite").resolve()) in message
    assert "MATCHMAKING_DATA_DIR" in message and "MATCHMAKING_TOPIC" in message
    with EmbeddedEventLog(tmp_path / "tables.sqlite", 3) as log:
        assert [(r.game_id, r.schema_version) for p in range(3) for r in log.read_partition(p)] == [("t1", 1)]


def test_the_matchmaking_process_exits_with_that_message_alone(tmp_path: Path) -> None:
    write_format_1_journal(tmp_path)
    stderr = refused_at_start(
        "rummy_matchmaking", {"MATCHMAKING_DATA_DIR": str(tmp_path), "MATCHMAKING_ADDRESS": "127.0.0.1:0"}
    )
    assert stderr.strip().endswith("(ENGINE_TABLES under `meldstream run`).")
    assert "older meldstream (matchmaking journal format 1" in stderr
