"""docs/clients/write-a-bot.md, run as a reader would: its scripts taken from the page as written,
against `meldstream run` on an embedded store. Over gRPC, two bots made with them meet at a private
table and play a game to its end; over HTTP, the page's shell steps run as written (curl, and its
standard-library bot), one bot challenging the other, which accepts, and both playing the game out."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from rummy_infra.local import free_port
from rummy_infra.serving import stop_process

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "clients" / "write-a-bot.md"


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


@pytest.mark.slow
def test_the_guide_s_two_bots_play_a_game_to_its_end(platform: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "bot_token.py").write_text(step("bot_token.py"))
    (tmp_path / "bot.py").write_text(step("bot.py"))
    assert "bot_token.py" in step("run", "") and "bot.py" in step("run", "")
    suffix = uuid.uuid4().hex[:6]

    def run(*arguments: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, *arguments], cwd=tmp_path, env=platform, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    tokens = []
    for name in ("ann", "bo"):
        made = run("bot_token.py", f"{name}-maker-{suffix}", f"{name}-bot-{suffix}")
        out, err = made.communicate(timeout=60)
        assert made.returncode == 0, err
        tokens.append(out.strip())
    bots = [run("bot.py", token, f"guide-{suffix}") for token in tokens]
    results = [bot.communicate(timeout=300) for bot in bots]
    for bot, (out, err) in zip(bots, results, strict=True):
        assert bot.returncode == 0, out + err
        assert re.search(r"^seated at \S+, seat [01]$", out, re.M), out
        assert re.search(r"^game over after \d+ moves of mine: winners \[\d", out, re.M), out
    games = {re.search(r"seated at (\S+),", out).group(1) for out, _ in results}  # type: ignore[union-attr]
    assert len(games) == 1  # the two met at one table


@pytest.mark.slow
def test_the_guide_s_http_bots_meet_by_a_challenge(platform: dict[str, str], tmp_path: Path) -> None:
    assert shutil.which("curl"), "the guide's HTTP steps use curl"
    (tmp_path / "bot_token.py").write_text(step("bot_token.py"))
    (tmp_path / "http_bot.py").write_text(step("http_bot.py"))
    (tmp_path / ".venv").symlink_to(Path(sys.executable).parents[1])  # the page's `.venv/bin/python`
    script = "set -eu\n" + step("sign-in", "bash") + step("challenge", "bash")  # "in the same shell"
    command = ["bash", "-c", script]
    run = subprocess.run(
        command, cwd=tmp_path, env=platform, capture_output=True, text=True, timeout=180, check=False
    )
    out = run.stdout
    assert run.returncode == 0, out + run.stderr
    account = json.loads(out.splitlines()[0])
    assert (account["display_name"], account["kind"]) == ("cy-bot", "bot"), out
    challenged = re.search(r"^challenged (\S+): (ch-\S+)$", out, re.M)
    accepted = re.search(r"^accepted (ch-\S+) from (\S+)$", out, re.M)
    assert challenged and accepted, out + run.stderr
    assert (accepted.group(1), accepted.group(2)) == (challenged.group(2), account["player"]), out
    games = re.findall(r"^playing (\S+), seat ([01])$", out, re.M)
    assert len({game for game, _ in games}) == 1 and sorted(seat for _, seat in games) == ["0", "1"], out
    assert len(re.findall(r"^game over after [1-9]\d* moves of mine: winners \[\d", out, re.M)) == 2, out
