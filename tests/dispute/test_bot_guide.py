"""docs/clients/write-a-bot.md, run as a reader would: its scripts taken from the page as written,
against `meldstream run` on an embedded store, and its shell steps run as written. Over gRPC, two bots
made with them meet at a private table by its link and play a game to its end; over HTTP (curl, and
a standard-library bot), one bot challenges the other, which accepts, and both play the game out."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from rummy_infra.local import free_port
from rummy_infra.serving import stop_process

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "clients" / "write-a-bot.md"
OVER = r"^game over after [1-9]\d* moves of mine: winners \[\d"  # a bot's last line, its game ended


def step(name: str, language: str = "python") -> str:
    """The code block after the page's `<!-- step: NAME -->` marker."""
    found = re.search(rf"<!-- step: {re.escape(name)} -->\n```{language}\n(.*?)```", GUIDE.read_text(), re.S)
    assert found, f"{GUIDE.name} has no ```{language} block for step {name!r}"
    return found.group(1)


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """`meldstream run` (step 1), on free ports named in the environment the guide's scripts read."""
    data = tmp_path_factory.mktemp("guide")
    env = {
        **os.environ,
        **{
            f"{service}_ADDRESS": f"127.0.0.1:{free_port()}"
            for service in ("ENGINE", "MATCHMAKING", "SCORING")
        },
        "IDENTITY_ADDRESS": f"127.0.0.1:{free_port()}",
    }
    web = f"127.0.0.1:{free_port()}"
    command = [
        sys.executable,
        "-m",
        "meldstream_cli.main",
        "run",
        "--data-dir",
        str(data / "store"),
        "--web",
        web,
    ]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    ready = threading.Event()
    lines: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if f"http://{web}" in line:
                ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert ready.wait(90), "".join(lines)
        yield {**env, "GATEWAY_URL": f"http://{web}"}
    finally:
        stop_process(proc, signal.SIGINT, timeout_s=30)
        reader.join(10)
        assert proc.stdout is not None
        proc.stdout.close()


def _shell(platform: dict[str, str], tmp_path: Path, *steps: str) -> tuple[str, str]:
    """The page's shell `steps`, one after another in one bash (`set -eu`), in a folder holding its
    scripts and the clone's `.venv` as the page's commands name it; their output and errors."""
    for script in ("bot_token.py", "table.py", "bot.py", "http_bot.py"):
        (tmp_path / script).write_text(step(script))
    (tmp_path / ".venv").symlink_to(Path(sys.executable).parents[1])
    script = "set -eu\n" + "".join(step(name, "bash") for name in steps)
    command = ["bash", "-c", script]
    env = {k: v for k, v in platform.items() if k != "PYTHONUNBUFFERED"}  # each bot's lines: one write
    run = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180, check=False
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout, run.stderr


@pytest.mark.slow
def test_the_guide_s_two_bots_play_a_game_to_its_end(platform: dict[str, str], tmp_path: Path) -> None:
    out, err = _shell(platform, tmp_path, "run")
    games = re.findall(r"^seated at (\S+), seat ([01])$", out, re.M)
    assert len({game for game, _ in games}) == 1, out + err  # the two met at one table
    assert sorted(seat for _, seat in games) == ["0", "1"], out + err
    assert len(re.findall(OVER, out, re.M)) == 2, out + err


@pytest.mark.slow
def test_the_guide_s_http_bots_meet_by_a_challenge(platform: dict[str, str], tmp_path: Path) -> None:
    assert shutil.which("curl"), "the guide's HTTP steps use curl"
    out, err = _shell(platform, tmp_path, "sign-in", "challenge")  # "in the same shell"
    account = json.loads(out.splitlines()[0])
    assert (account["display_name"], account["kind"]) == ("cy-bot", "bot"), out
    challenged = re.search(r"^challenged (\S+): (ch-\S+)$", out, re.M)
    accepted = re.search(r"^accepted (ch-\S+) from (\S+)$", out, re.M)
    assert challenged and accepted, out + err
    assert (accepted.group(1), accepted.group(2)) == (challenged.group(2), account["player"]), out
    games = re.findall(r"^playing (\S+), seat ([01])$", out, re.M)
    assert len({game for game, _ in games}) == 1 and sorted(seat for _, seat in games) == ["0", "1"], out
    assert len(re.findall(OVER, out, re.M)) == 2, out + err
