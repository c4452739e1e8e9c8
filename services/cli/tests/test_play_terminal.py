"""`meldstream play` in a real pseudo-terminal, as a person types: a whole game against a bot, choosing
only from the numbered moves the engine offers, on a running `meldstream run`."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
from rummy_infra.local import free_port
from rummy_infra.serving import wait_serving

pytestmark = pytest.mark.slow
# Going out or melding first, else drawing, else the first discard offered.
PREFERENCE = ("Go out", "Meld", "Lay off", "Draw from stock", "Discard")
PLAY = ["-m", "meldstream_cli.main", "play", "kalooki", "--players", "2", "--name", "tess", "--pace", "0"]
MENU = re.compile(r"^\s*(\d+)\) (.+?)\s*$", re.M)


def _choose(menu: str) -> str:
    offered = MENU.findall(menu)
    for word in PREFERENCE:
        for number, text in offered:
            if text.startswith(word):
                return str(number)
    return str(offered[0][0])


def _groups(child: pexpect.spawn[str]) -> tuple[str, ...]:
    assert isinstance(child.match, re.Match)
    return tuple(str(group) for group in child.match.groups())


def test_a_whole_game_against_a_bot_in_the_terminal(tmp_path: Path) -> None:
    engine = f"127.0.0.1:{free_port()}"
    env = {
        **os.environ,
        "ENGINE_ADDRESS": engine,
        "MATCHMAKING_ADDRESS": f"127.0.0.1:{free_port()}",
        "SCORING_ADDRESS": f"127.0.0.1:{free_port()}",
        "WEB_ADDRESS": f"127.0.0.1:{free_port()}",
    }
    command = [sys.executable, "-m", "meldstream_cli.main", "run", "--data-dir", str(tmp_path / "store")]
    with subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL) as platform:
        try:
            wait_serving(engine, platform, timeout_s=90)
            play = pexpect.spawn(
                sys.executable,
                PLAY,
                env={**env, "COLUMNS": "120", "TERM": "xterm"},
                encoding="utf-8",
                timeout=60,
            )
            moves = 0
            while play.expect([r"Your move \[1-\d+\]: ", r"Game over[^\n]*winner: (\S+)"]) == 0:
                play.sendline(_choose(str(play.before)))
                moves += 1
            winner = _groups(play)[0]
            play.expect(r"totals: tess (\d+), bot-ada (\d+)")
            totals = dict(zip(("tess", "bot-ada"), map(int, _groups(play)), strict=True))
            play.expect(pexpect.EOF)
            play.close()
            assert play.exitstatus == 0
            assert moves > 2 and totals[winner.strip(",")] == 0, (winner, totals)
        finally:
            platform.send_signal(signal.SIGINT)
            platform.wait(30)
