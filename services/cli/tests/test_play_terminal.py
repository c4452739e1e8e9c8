"""`meldstream play` in a real pseudo-terminal, as a person types: whole games against bots, choosing only
from the numbered moves the engine offers, on a running `meldstream run`: kalooki, Rummy 40
and Rummy 500 (their short matches), and contract rummy with its buy window (the person buys a bot's
discard once, then passes)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pexpect
import pytest
from meldstream_cli.signing_in import PASSWORD_VARIABLE
from rummy_client.identity import IdentityClient
from rummy_identity.testing import PASSWORD
from rummy_infra.local import free_port
from rummy_infra.serving import wait_serving
from rummy_rules.variant import variant_named

pytestmark = pytest.mark.slow
# Going out or melding first, else drawing, else the first discard offered.
PREFERENCE = ("Go out", "Meld", "Lay off", "Draw from stock", "Discard")
MENU = re.compile(r"^\s*(\d+)\) (.+?)\s*$", re.M)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _choose(menu: str, first: tuple[str, ...] = ()) -> tuple[str, str]:
    """The number to type and the move it is: the first of `first`, else by PREFERENCE."""
    offered = [(number, ANSI.sub("", text)) for number, text in MENU.findall(menu)]
    for word in (*first, *PREFERENCE):
        for number, text in offered:
            if text.startswith(word):
                return number, text
    return offered[0]


def _groups(child: pexpect.spawn[str]) -> tuple[str, ...]:
    assert isinstance(child.match, re.Match)
    return tuple(str(group) for group in child.match.groups())


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """`meldstream run` on free ports with tess signed up; yields the environment that reaches it as her."""
    engine = f"127.0.0.1:{free_port()}"
    env = {
        **os.environ,
        "ENGINE_ADDRESS": engine,
        "MATCHMAKING_ADDRESS": f"127.0.0.1:{free_port()}",
        "SCORING_ADDRESS": f"127.0.0.1:{free_port()}",
        "IDENTITY_ADDRESS": f"127.0.0.1:{free_port()}",
        "WEB_ADDRESS": f"127.0.0.1:{free_port()}",
    }
    store = tmp_path_factory.mktemp("terminal") / "store"
    command = [sys.executable, "-m", "meldstream_cli.main", "run", "--data-dir", str(store)]
    with subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL) as running:
        try:
            wait_serving(engine, running, timeout_s=90)
            IdentityClient(env["IDENTITY_ADDRESS"]).sign_up("tess", PASSWORD, device="tests")
            yield {**env, PASSWORD_VARIABLE: PASSWORD}
        finally:
            running.send_signal(signal.SIGINT)
            running.wait(30)


def _play(env: dict[str, str], *arguments: str) -> pexpect.spawn[str]:
    command = ["-m", "meldstream_cli.main", "play", *arguments, "--name", "tess", "--pace", "0"]
    return pexpect.spawn(
        sys.executable, command, env={**env, "COLUMNS": "160", "TERM": "xterm"}, encoding="utf-8", timeout=60
    )


def _totals(play: pexpect.spawn[str], players: tuple[str, ...]) -> dict[str, int]:
    play.expect(r"totals: " + ", ".join(rf"{re.escape(p)} (-?\d+)" for p in players))
    return dict(zip(players, map(int, _groups(play)), strict=True))


@pytest.mark.parametrize(
    "variant, short",
    [("kalooki", ()), ("rummy40", ("--short",)), ("rummy500", ("--short",))],  # short: one deal; to 100
)
def test_a_whole_game_against_a_bot_in_the_terminal(
    platform: dict[str, str], variant: str, short: tuple[str, ...]
) -> None:
    play = _play(platform, variant, "--players", "2", *short)
    moves = 0
    shown = ""
    while play.expect([r"Your move \[1-\d+\]: ", r"Game over[^\n]*winner: (\S+)"]) == 0:
        shown += ANSI.sub("", str(play.before))
        play.sendline(_choose(str(play.before))[0])
        moves += 1
    winner = _groups(play)[0]
    # Every move as it happens, the bot's too, in the web table's words.
    assert re.search(r"^  bot-ada (drew from|discarded|melded)", shown, re.M), shown[-2000:]
    assert re.search(r"^  You (drew|discarded)", shown, re.M), shown[-2000:]
    totals = _totals(play, ("tess", "bot-ada"))
    play.expect(pexpect.EOF)
    play.close()
    assert play.exitstatus == 0
    best = max if variant_named(variant).higher_is_better else min  # the winner has the best total
    assert moves > 2 and totals[winner.strip(",")] == best(totals.values()), (winner, totals)


def test_contract_in_the_terminal_buying_from_the_buy_window(platform: dict[str, str]) -> None:
    """Three seats, so a bot's discard may be bought by the person while the other bot is to draw (and
    that bot waits for the answer); round 1 only (`--short`): eight rounds are ~400 moves."""
    play = _play(platform, "contract", "--players", "3", "--short")
    screens: list[str] = []
    chosen: list[tuple[bool, str]] = []  # (bought before, the move)
    bought = False
    while play.expect([r"Your move \[1-\d+\]: ", r"Game over[^\n]*winner: (\S+)"]) == 0:
        screen = ANSI.sub("", str(play.before))
        screens.append(screen)
        # Bought once the table says so (a buy is granted when the forehand draws; another seat may
        # have asked first): buy until then, pass after.
        bought = bought or re.search(r"tess: \d+ cards · score -?\d+ · buys 1", screen) is not None
        number, move = _choose(screen, ("Pass",) if bought else ("Buy",))
        play.sendline(number)
        chosen.append((bought, move))
    totals = _totals(play, ("tess", "bot-ada", "bot-ben"))
    play.expect(pexpect.EOF)
    play.close()
    assert play.exitstatus == 0
    assert bought and any(after and move.startswith("Pass") for after, move in chosen), chosen
    assert all("round 1 (rounds 1-1): contract 1 run and 1 three" in screen for screen in screens)
    offered = next(screen for screen in screens if "1) Buy" in screen)
    assert re.search(r"buy window: \S+ \((discarded by bot-ada|the upcard)\) is on offer", offered), offered
    assert set(totals) == {"tess", "bot-ada", "bot-ben"}


def test_ctrl_c_at_a_prompt_that_shows_the_clock_leaves_at_once(platform: dict[str, str]) -> None:
    """The prompt says the time left to move (the engine's default 30 s turn limit); Ctrl-C there ends
    the game's client at once, with no Enter, no traceback and the Ctrl-C status."""
    play = _play(platform, "rummy40", "--players", "2", "--short")
    play.expect(r"\((\d+) s left\) Your move \[1-\d+\]: ")
    assert 0 < int(_groups(play)[0]) <= 30
    play.sendintr()
    interrupted = time.monotonic()
    play.expect(pexpect.EOF, timeout=30)  # never, before: it waited for Enter
    took = time.monotonic() - interrupted
    play.close()
    assert play.exitstatus == 130 and "Traceback" not in str(play.before), play.before
    assert took < 10, took  # about a second; the margin is for a machine busy with other tests


def test_ctrl_c_at_the_password_prompt_leaves_at_once_with_the_echo_back_on() -> None:
    """No platform needed: the password is asked before identity is called."""
    env = {name: value for name, value in os.environ.items() if name != PASSWORD_VARIABLE}
    command = ["-m", "meldstream_cli.main", "play", "kalooki", "--name", "tess"]
    command += ["--identity", f"127.0.0.1:{free_port()}"]
    play = pexpect.spawn(sys.executable, command, env=env, encoding="utf-8", timeout=30)
    play.expect("password for tess: ")
    assert not play.getecho()  # getpass turned it off
    play.sendintr()
    play.expect(pexpect.EOF, timeout=10)  # it waited for Enter: asked in a worker thread
    assert play.getecho()
    play.close()
    assert play.exitstatus == 130 and "Traceback" not in str(play.before), play.before
