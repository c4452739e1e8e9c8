"""The `meldstream` commands on a store an older meldstream wrote: one message that says what to do."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf import json_format
from meldstream_cli.main import main
from rummy.game.v1 import events_pb2
from rummy.game.v1 import game_service_pb2 as gs
from rummy_contracts.event_format import SCHEMA_VERSION
from rummy_store import NewEvent
from rummy_store.embedded_log import EmbeddedEventLog


@pytest.fixture
def old_store(tmp_path: Path) -> Path:
    """One game's first record as written before event format 2 (schema version 1)."""
    with EmbeddedEventLog(tmp_path / "events.sqlite", 3) as log:
        log.append("old", 'table:{"players": ["ann", "bob"]}', 0, [NewEvent("game_started", b"", 1)])
    return tmp_path


@pytest.mark.parametrize("command", ["replay", "verify"])
def test_reading_an_older_store_says_what_to_do(old_store: Path, command: str) -> None:
    with pytest.raises(SystemExit) as exited:
        main([command, "old", "--data-dir", str(old_store)])
    assert isinstance(exited.value.code, str)
    assert exited.value.code.startswith(f"meldstream {command}: game 'old' (seq 1) was written by an older")
    assert "--data-dir" in exited.value.code


def test_run_on_an_older_store_stops_before_serving(old_store: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "meldstream_cli.main",
            "run",
            "--data-dir",
            str(old_store),
            "--address",
            "127.0.0.1:0",
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,  # a run that did not refuse would serve until killed
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    # A notice about the old store's partition count may come first; the refusal is the last line.
    assert done.stderr.splitlines()[-1].startswith(
        f"meldstream run: embedded store in {old_store.resolve()} was written by an older"
    )


def test_verifying_a_history_of_another_format_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """GetHistory's JSON carries each event's format: one of another format is named, not misread. The
    store's remedy (a new store) is left out: a file has none."""
    started = events_pb2.GameEvent(
        game_id="old", seq=1, schema_version=1, game_started=events_pb2.GameStarted(variant="rummy40")
    )
    history = gs.GetHistoryResponse(entries=[gs.HistoryEntry(event=started)])
    path = tmp_path / "history.json"
    path.write_text(json_format.MessageToJson(history))
    assert main(["verify", "--file", str(path)]) == 1
    assert capsys.readouterr().out == (
        f"meldstream verify: {path}: event format 1; this meldstream reads format {SCHEMA_VERSION}\n"
    )
