"""`meldstream run --demo`, then `meldstream replay` and `meldstream verify` on what it played."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from meldstream_cli.main import main
from rummy_infra.local import free_port


def test_run_demo_then_replay_and_verify_a_finished_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "store"
    address = f"127.0.0.1:{free_port()}"
    command = [sys.executable, "-m", "meldstream_cli.main", "run", "--demo", "1", "--data-dir", str(data)]
    env = {**os.environ, "ENGINE_ADDRESS": address}
    with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        lines = []
        try:
            for line in proc.stdout:
                lines.append(line)
                if " over after " in line:
                    break
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(30)
    assert lines[0].startswith(f"meldstream engine listening on {address}")
    match = re.search(r"game (\w+) over after (\d+) events", lines[-1])
    assert match, "".join(lines)
    game, events = match.group(1), int(match.group(2))

    assert main(["verify", game, "--data-dir", str(data)]) == 0
    assert "verified" in capsys.readouterr().out
    assert main(["replay", game, "--data-dir", str(data), "--to", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("seq 1: GameStarted(") and "seq 2: CardDrawn(" in out and "seq 3" not in out
    assert "ada" in out and "discard:" in out
    assert main(["replay", game, "--data-dir", str(data)]) == 0
    assert f"seq {events}: GameEnded(" in capsys.readouterr().out
    assert main(["verify", "no-such-game", "--data-dir", str(data)]) == 1
