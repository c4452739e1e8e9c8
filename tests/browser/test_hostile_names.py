"""Hostile names are only text wherever a person meets one. Player ids an operator seats through the
engine's CreateGame (any character, up to 64) that are markup and scripts, a right-to-left override
behind an unpaired isolate closer, zero-width characters, terminal escapes and rich markup: in every
page of the web app (lobby, spectator view, result, replay viewer) and in `meldstream replay --html`,
no script runs, each name reads as typed (less its invisible bidi controls), reverses nothing around
it and widens no page; through `meldstream replay` and `watch` and in the platform's logs, no raw
control character is printed and nothing breaks. A display name of markup is text in the header. A
10,000-character name is refused at the table, and shown cut, saying so, where one reaches a page.

(Account names are 3-24 letters, digits, `_` or `-`, and display names printable text, so a signed-in
person can no longer be such a name; only ids an operator seats can, and these are what is checked.)

On the session's platform (tests/browser/conftest.py): two rummy40 tables of these names, seated by
the run's operator, one left open (its turn timer an hour) and one whose every turn the engine plays
(a 1 s limit, the least). Nobody holds these ids, so neither table ends: a finished table's result
and history are checked with real accounts in test_web_app.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
from meldstream_cli import replay_html
from rummy_client import GameClient, RpcFailure
from rummy_service.text import printable
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from .conftest import Platform, console_errors, screenshot, sign_in, until

pytestmark = pytest.mark.slow
NAMES = (
    "<img src=x onerror=alert(1)>",  # an alert would fail the next WebDriver command
    '"><script>window.__pwned=1</script>',
    "</script><img src=x onerror=window.__pwned=2>",  # would end the export's script element
    "\u2069\u202eevil",  # ends an isolate, then overrides: "13 cards" would read "sdrac 31"
    "z\u200bw\u200c\u200d\ufeffj",  # zero-width space, non-joiner, joiner, no-break space
    "\x1b]0;pwned\x07\x1b[2J[bold]x[/x]",  # a terminal's title, bell, clear screen; rich markup
)
SHOWN = [re.sub("[\u202a-\u202e\u2066-\u2069]", "", name) for name in NAMES]  # what a page shows
LIVE, TIMED = "hostile-live", "hostile-timed"
LONG = "n" * 10_000
CUT = "n" * 64 + "…(+9936 characters)"

# Everything one check needs, read in one WebDriver round trip: did a payload run, what the names
# under `arguments[0]` read, whether the text beside each name reads left to right with the name
# between, whether the page's own words that follow names ("cards", "score", "to move"...) read left
# to right wherever they are, and whether the page is wider than the window.
_CHECK = """
const root = document.querySelector(arguments[0]);
const boxes = (node, from, to) => {
  const range = document.createRange();
  const found = [];
  for (let i = from; i < to; i++) {
    if (!node.data[i].trim()) continue;
    range.setStart(node, i);
    range.setEnd(node, i + 1);
    const box = range.getBoundingClientRect();
    if (box.width) found.push(box);
  }
  return found;
};
const leftToRight = (list) => list.every((box, i) => i === 0 || Math.abs(box.top - list[i - 1].top) > 2
  || box.left >= list[i - 1].left - 0.5);
const shown = [...root.querySelectorAll("bdi.name")].filter((name) => name.getClientRects().length);
const wrong = [];
for (const name of shown) {
  const own = name.getClientRects();
  const before = name.previousSibling, after = name.nextSibling;
  const text = (node) => node && node.nodeType === Node.TEXT_NODE && node.data.trim();
  const left = text(before) ? boxes(before, 0, before.data.length) : [];
  const right = text(after) ? boxes(after, 0, after.data.length) : [];
  const order = [...left.slice(-1), own[0], ...right.slice(0, 1)];
  if (!leftToRight(left) || !leftToRight(right) || !leftToRight(order)) {
    wrong.push(name.parentElement.textContent);
  }
}
const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  for (const word of ["cards", "score", "to move", "started", "signed in", "in all", "deals", "view"]) {
    const at = node.data.indexOf(word);
    if (at >= 0 && !leftToRight(boxes(node, at, at + word.length))) wrong.push(node.data);
  }
}
return {
  pwned: window.__pwned ?? null,
  images: document.querySelectorAll("img").length,
  inline: [...document.scripts].filter((s) => !s.src && s.type !== "application/json").length,
  names: shown.map((name) => name.textContent),
  reversed: wrong,
  wide: document.documentElement.scrollWidth > window.innerWidth,
};
"""


async def _seat(engine: str, operator_token: str) -> None:
    """The two tables, seated by an operator; the finished one is played by the engine's turn timer."""
    async with GameClient(engine, operator_token) as operator:
        await operator.create_game("rummy40", list(NAMES), LIVE, turn_timeout_ms=3_600_000)
        await operator.create_game("rummy40", list(NAMES), TIMED, turn_timeout_ms=1_000)  # the least


@pytest.fixture(scope="module")
def tables(platform: Platform) -> str:
    """The engine's address, once both tables are seated and one is over."""
    engine = platform.wait_for_line(r"meldstream engine listening on (\S+)").group(1)
    asyncio.run(_seat(engine, platform.operator()))
    for seat in range(len(NAMES)):  # every seat's turn played once by the engine
        platform.wait_for_line(rf"turn timed out game_id={TIMED} seat={seat} ", timeout_s=60)
    return engine


def _as(browser: WebDriver, platform: Platform, name: str, page: str, display_name: str = "") -> None:
    """Open `page` signed in as the account `name` (signed up with `display_name` the first time)."""
    sign_in(browser, platform, name, display_name)
    browser.get(f"{platform.url}/#/{page}")
    browser.refresh()


def _check(browser: WebDriver, where: str, names: list[str] = SHOWN, inline: int = 0) -> dict[str, Any]:
    """`inline`: the page's own inline scripts (a self-contained file has one, allowed by its hash)."""
    found: dict[str, Any] = browser.execute_script(_CHECK, where)
    assert found["pwned"] is None and found["images"] == 0 and found["inline"] == inline, found
    assert set(names) <= set(found["names"]), found["names"]  # each name as typed
    assert found["reversed"] == [] and not found["wide"], found
    return found


def test_the_lobby_the_table_and_the_spectator_view(
    browser: WebDriver, platform: Platform, tables: str
) -> None:
    _as(browser, platform, "hostile-lobby", "lobby", display_name=NAMES[0])

    def listed(driver: WebDriver) -> bool:
        driver.find_element(By.ID, "refresh-live").click()  # scoring lists a game once it follows it
        return NAMES[0] in driver.find_element(By.ID, "live-games").text

    until(browser, listed)
    assert _check(browser, "header", [SHOWN[0]])["names"] == [SHOWN[0]]  # "signed in as" her display name
    _check(browser, "#live-games")
    screenshot(browser, "hostile-lobby")

    browser.get(f"{platform.url}/#/watch/{LIVE}")
    browser.refresh()
    until(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#seats .seat")) == 6)
    _check(browser, "#table-page")
    override = browser.find_elements(By.CSS_SELECTOR, "#seats .seat")[3].text  # the name that overrides
    assert re.fullmatch(r"evil · \d+ cards · score 0", override), override
    screenshot(browser, "hostile-watch")
    assert console_errors(browser) == []


def test_a_ten_thousand_character_name_is_refused_and_shown_cut(
    browser: WebDriver, platform: Platform, tables: str
) -> None:
    async def create() -> RpcFailure:
        async with GameClient(tables, platform.operator(), retry_for_s=0) as operator:
            with pytest.raises(RpcFailure) as refused:
                await operator.create_game("rummy40", ["ann", LONG])
            return refused.value

    refusal = asyncio.run(create())
    assert refusal.status is grpc.StatusCode.INVALID_ARGUMENT
    assert refusal.details == "too_long: player_ids[1] has 10000 characters; at most 64"  # not echoed

    _as(browser, platform, "hostile-long", "lobby")
    until(browser, lambda d: "signed in as" in d.find_element(By.ID, "who").text)
    browser.execute_script("document.getElementById('replay-id').value = arguments[0]", LONG)
    browser.find_element(By.CSS_SELECTOR, "#replay-form button").click()
    until(browser, lambda d: "No replay" in d.find_element(By.ID, "message").text)
    assert browser.find_element(By.ID, "message").text == (
        "No replay: too_long: game_id has 10000 characters; at most 64"
    )
    _check(browser, "body", [])
    screenshot(browser, "hostile-long-name")
    errors = console_errors(browser)  # the browser reports the two refused calls (export, verify), no more
    assert len(errors) == 2 and all(error.endswith("status of 400 (Bad Request)") for error in errors), errors


def _meldstream(platform: Platform, *arguments: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "meldstream_cli.main", *arguments],
        env=platform.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _escaped_in(output: str) -> None:
    """Nothing a terminal would act on, and each name shown with what it hides escaped."""
    assert all(line.isprintable() for line in output.split("\n")), [
        line for line in output.split("\n") if not line.isprintable()
    ][:3]
    for name in NAMES:
        assert printable(name) in output, printable(name)


def test_replay_html_runs_no_name_and_cuts_a_long_one(
    browser: WebDriver, platform: Platform, tables: str, tmp_path: Path
) -> None:
    page = tmp_path / "replay.html"
    exported = _meldstream(platform, "replay", TIMED, "--data-dir", str(platform.data), "--format", "json")
    assert exported.isascii()  # the export escapes every character beyond ASCII
    _meldstream(platform, "replay", TIMED, "--data-dir", str(platform.data), "--html", str(page))
    source = page.read_text()
    assert f'<meta http-equiv="Content-Security-Policy" content="{replay_html.POLICY}">' in source
    assert "unsafe" not in replay_html.POLICY and "'sha256-" in replay_html.POLICY
    browser.get(page.as_uri())
    until(browser, lambda d: d.find_element(By.ID, "position").text.startswith("event 1 of "))
    _check(browser, "#table", inline=1)
    summary = browser.find_element(By.ID, "summary").get_attribute("textContent") or ""
    assert all(f"\u2068{name}\u2069" in summary for name in SHOWN), summary  # isolated in the text
    screenshot(browser, "hostile-replay-html")
    assert console_errors(browser) == []  # a policy blocking the page's own script says so here

    doc = json.loads(exported)
    doc["summary"]["players"][0] = doc["summary"]["names"][0] = LONG  # as from a log before names had a limit
    page.write_text(replay_html.render(doc))
    browser.get(page.as_uri())
    until(browser, lambda d: d.find_element(By.ID, "position").text.startswith("event 1 of "))
    _check(browser, "#table", [CUT], inline=1)
    assert f"\u2068{CUT}\u2069" in (browser.find_element(By.ID, "summary").get_attribute("textContent") or "")
    assert console_errors(browser) == []


def test_replay_prints_the_names_escaped(platform: Platform, tables: str) -> None:
    text = _meldstream(platform, "replay", TIMED, "--data-dir", str(platform.data), "--to", "4")
    _escaped_in(text)
    assert re.search(r"^  [> ] 0 <img src=x onerror=alert\(1\)>\s+\d+ \| ", text, re.M), text  # a table
    assert "[bold]x[/x]" in text  # rich markup shown, not obeyed


def test_the_logs_hold_no_raw_control_character(platform: Platform, tables: str) -> None:
    lines = [line.rstrip("\n") for line in platform.lines]
    assert [line for line in lines if not line.isprintable()] == []
    timed_out = [line for line in lines if f"turn timed out game_id={TIMED} " in line]
    # Each quoted (it has a space, a quote or what is not printable), C0 escaped as JSON does it, the
    # rest as rummy_service.text does.
    for name in NAMES:
        quoted = f" player={printable(json.dumps(name, ensure_ascii=False))} "
        assert any(quoted in line for line in timed_out), (quoted, timed_out[:6])
