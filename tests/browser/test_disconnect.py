"""Disconnect protection in two browsers (meldstream M3): a player at a private table leaves the page;
the other sees "… disconnected, N s" counting down; the first comes back within the grace and plays
on; then leaves for good: after the grace the engine plays one turn for them, and at the next the seat
forfeits, which ends the two-seat game with the one who stayed as its winner. Each seat's time bank
is shown beside its clock.

Its own platform with short settings (an 8 s grace, one automatic turn), so the whole runs in well under
a minute once the platform is up."""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Iterator

import pytest
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.select import Select

from .conftest import (
    GAME_S,
    Move,
    Platform,
    _answered,
    click,
    console_errors,
    open_chromium,
    page,
    running_platform,
    screenshot,
    sign_in,
    story,
    until,
)

pytestmark = pytest.mark.slow
GRACE_S = 8
GAME_HASH = re.compile(r"#/play/(pt-[0-9a-f]+)/(\d)$")
COUNTDOWN = re.compile(r"Fina disconnected, (\d+) s")


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    """`meldstream run` (no demo tables) whose engine gives a disconnected seat an 8 s grace and one
    automatic turn, plays an away or disconnected seat 0.3 s after its grace, and gives every seat a
    1 s time bank."""
    settings = {
        "ENGINE_DISCONNECT_GRACE_MS": str(GRACE_S * 1000),
        "ENGINE_FORFEIT_AFTER_TURNS": "1",
        "ENGINE_AWAY_GRACE_MS": "300",
        "ENGINE_TIME_BANK_MS": "1000",
    }
    with running_platform(tmp_path_factory, demo=0, **settings) as running:
        yield running


@pytest.fixture
def friend() -> Iterator[WebDriver]:
    driver = open_chromium()
    try:
        yield driver
    finally:
        driver.quit()


def _game(browser: WebDriver) -> tuple[str, int]:
    until(browser, lambda d: GAME_HASH.search(d.current_url), timeout_s=GAME_S)
    found = GAME_HASH.search(browser.current_url)
    assert found is not None
    until(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#hand .card"))
    return found[1], int(found[2])


def _quiet(moves: list[Move]) -> Move:
    """Draw from the stock, then discard: a turn that never ends the deal."""
    for kind in ("draw_from_stock", "discard"):
        offered = [move for move in moves if move.kind == kind]
        if offered:
            return offered[-1]
    return moves[0]


def _move(person: WebDriver) -> bool:
    """One move if the page offers one (True when made)."""
    now = page(person)
    if now.over or not now.moves:
        return False
    try:
        move = _quiet(now.moves)
        move.element.click()
        until(person, functools.partial(_answered, move.element), timeout_s=GAME_S)
    except StaleElementReferenceException:
        return False
    assert "Refused" not in person.find_element(By.ID, "message").text
    return True


def _countdown(host: WebDriver, seat: int) -> int | None:
    """The seconds the host's page counts down for the friend's seat, None when it shows none."""
    try:
        text = host.find_element(By.ID, f"presence-{seat}").text
    except (NoSuchElementException, StaleElementReferenceException):
        return None
    found = COUNTDOWN.search(text)
    return int(found[1]) if found else None


def test_a_player_who_drops_is_counted_down_comes_back_then_forfeits(
    browser: WebDriver, friend: WebDriver, platform: Platform
) -> None:
    host = browser
    sign_in(host, platform, "hugo")
    sign_in(friend, platform, "fina", "Fina")
    Select(host.find_element(By.ID, "variant")).select_by_value("kalooki")
    Select(host.find_element(By.ID, "players")).select_by_value("2")
    click(host, "invite")
    until(host, lambda d: d.find_element(By.ID, "private-link").get_attribute("value"))
    link = str(host.find_element(By.ID, "private-link").get_attribute("value"))
    friend.get(link)
    click(friend, "private-join")
    (game, _), (same, seat) = _game(host), _game(friend)
    assert game == same
    table = friend.current_url
    began = time.monotonic()
    try:
        # Each seat's bank is shown beside its clock.
        banks = [host.find_element(By.ID, f"bank-{n}").text for n in (0, 1)]
        assert banks == ["bank 0:01", "bank 0:01"], banks
        # Fina leaves the page: Hugo's page counts her grace down.
        friend.get(platform.url)
        until(host, lambda d: _countdown(d, seat) is not None, timeout_s=10)
        first = _countdown(host, seat)
        assert first is not None and 0 < first <= GRACE_S
        screenshot(host, "presence-countdown")
        until(host, lambda d: (left := _countdown(d, seat)) is not None and left < first, timeout_s=5)
        # She is back within the grace: the countdown goes, and she plays on.
        friend.get(table)
        until(friend, lambda d: d.find_elements(By.CSS_SELECTOR, "#hand .card"))
        until(host, lambda d: not d.find_elements(By.ID, f"presence-{seat}"), timeout_s=10)
        made = 0
        while made < 2:
            made += _move(friend)
            _move(host)
        # She leaves for good: the grace, her bank, one turn the engine plays for her, then her seat
        # forfeits and the game ends with Hugo its winner.
        friend.get(platform.url)
        until(host, lambda d: _countdown(d, seat) is not None, timeout_s=10)
        deadline = time.monotonic() + 40
        while not page(host).over and time.monotonic() < deadline:
            if not _move(host):
                time.sleep(0.1)
        assert page(host).over
        seats = host.find_element(By.ID, "seats").text
        assert "forfeited" in seats, seats
        log = host.execute_script("return document.getElementById('log').innerText") or ""
        for line in (
            "Fina disconnected",
            "Fina reconnected",
            "Fina used 1 s of the time bank",
            "Fina forfeited",
        ):
            assert line in log, log
        assert "hugo" in host.find_element(By.ID, "result").text
    except Exception as failure:
        raise AssertionError(story(host, platform) + "\n" + story(friend, platform)) from failure
    screenshot(host, "presence-forfeit")
    assert time.monotonic() - began < 60
    assert console_errors(host) == []
