"""Two people in two browsers challenge each other from the lobby: one types the other's name (in another
case, and Enter), with the lobby's variant, match and turn time; the other's page shows the challenge as
it arrives (their names as text, never markup; axe-core finds nothing serious) and declines it, which
the challenger's page shows; a second is canceled and leaves the other's list; a third is accepted from
the keyboard, and both pages move to the same game, the challenger at seat 0, each page sending its own
random seed before the first deal (on a platform with a seed window, as deployed). A name no account
has is refused at once."""

from __future__ import annotations

import functools
import re
import uuid
from collections.abc import Iterator

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.select import Select

from .conftest import (
    GAME_S,
    Platform,
    console_errors,
    open_chromium,
    running_platform,
    screenshot,
    sign_in,
    until,
)
from .test_card_table import _axe

pytestmark = pytest.mark.slow
GAME_HASH = re.compile(r"#/play/([\w-]+)/(\d)$")
WINDOW_MS = "15000"  # the first deal waits this long for the seats' seeds: time for both pages to come
SEEDED = re.compile(r"^(.+?) sent a seed for the shuffle: [0-9a-f]+")  # a line of the page's log


@pytest.fixture(scope="module")
def seeding(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    """The platform with a seed window, as deployed (the tests' own deal at creation, conftest.py)."""
    with running_platform(tmp_path_factory, ENGINE_SEED_WINDOW_MS=WINDOW_MS) as running:
        yield running


@pytest.fixture
def friend() -> Iterator[WebDriver]:
    """The second person's own browser."""
    driver = open_chromium()
    try:
        yield driver
    finally:
        driver.quit()


def _items(browser: WebDriver, list_id: str) -> list[WebElement]:
    return browser.find_elements(By.CSS_SELECTOR, f"#{list_id} li[data-challenge]")


def _challenge(browser: WebDriver, name: str) -> None:
    """Type `name` in the challenge form and press Enter."""
    field = browser.find_element(By.ID, "challenge-name")
    field.clear()
    field.send_keys(name + Keys.ENTER)


def _button(item: WebElement, action: str) -> WebElement:
    return item.find_element(By.CSS_SELECTOR, f"button[data-action='{action}']")


def _press(browser: WebDriver, list_id: str, showing: str, action: str, key: str = "") -> None:
    """Press `action` on the item of `list_id` showing `showing` (with `key`, else a click), once the
    item is there; a list redrawn by the account's next event in between is looked up again."""

    def pressed(driver: WebDriver) -> bool:
        item = next((i for i in _items(driver, list_id) if showing in i.text), None)
        if item is None:
            return False
        button = _button(item, action)
        button.send_keys(key) if key else button.click()
        return True

    until(browser, pressed)


def _seeded(browser: WebDriver) -> set[str]:
    """Who the page's log says sent a seed (names without the marks that isolate them)."""
    lines = browser.execute_script(
        "return [...document.querySelectorAll('#log li')].map((l) => l.textContent)"
    )
    found = (SEEDED.match(str(line).replace("\u2068", "").replace("\u2069", "")) for line in lines)
    return {match[1] for match in found if match}


def _seeded_by(names: set[str], browser: WebDriver) -> bool:
    return _seeded(browser) == names


def _game(browser: WebDriver) -> tuple[str, int]:
    """The game and seat the page moved to, once its hand is dealt."""
    until(browser, lambda d: GAME_HASH.search(d.current_url), timeout_s=GAME_S)
    found = GAME_HASH.search(browser.current_url)
    assert found is not None
    until(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#hand .card"), timeout_s=GAME_S)
    return found[1], int(found[2])


def test_one_person_challenges_another_who_declines_then_accepts_and_both_reach_the_game(
    browser: WebDriver, friend: WebDriver, seeding: Platform
) -> None:
    platform = seeding
    suffix = uuid.uuid4().hex[:4]
    cleo, dora = f"cleo{suffix}", f"dora{suffix}"
    sign_in(browser, platform, cleo, "<i>Cleo</i>")
    sign_in(friend, platform, dora, "<b>Dora</b>")
    Select(browser.find_element(By.ID, "variant")).select_by_value("rummy500")
    Select(browser.find_element(By.ID, "length")).select_by_value("short")
    Select(browser.find_element(By.ID, "turn-time")).select_by_value("60000")

    _challenge(browser, f"nobody{suffix}")
    until(browser, lambda d: "can be challenged" in d.find_element(By.ID, "message").text)
    assert f"nobody{suffix}" in browser.find_element(By.ID, "message").text
    console_errors(browser)  # the refused lookup's 404 is expected

    # The first challenge, declined.
    _challenge(browser, dora.upper())
    sent = "Challenge sent to \u2068<b>Dora</b>\u2069."  # the name isolated, as text
    until(browser, lambda d: d.find_element(By.ID, "message").text == sent)
    until(friend, lambda d: _items(d, "challenges-in"))
    (first,) = _items(friend, "challenges-in")
    assert first.text.startswith("<i>Cleo</i> challenges you: Rummy 500, 60 s a turn"), first.text
    assert not friend.find_elements(By.CSS_SELECTOR, "#challenges i, #challenges b")  # text, not markup
    (mine,) = _items(browser, "challenges-out")
    assert "You challenged <b>Dora</b>: Rummy 500, 60 s a turn · waiting for an answer" in mine.text
    screenshot(friend, "challenge-received")
    assert _axe(friend) == []  # the lobby with a challenge shown: no serious or critical violation
    _press(friend, "challenges-in", "challenges you", "decline")
    until(browser, lambda d: "· declined" in d.find_element(By.ID, "challenges-out").text)
    until(friend, lambda d: not _items(d, "challenges-in"))

    # The second, canceled by the challenger: gone from the other's list.
    _challenge(browser, dora)
    until(friend, lambda d: _items(d, "challenges-in"))
    _press(browser, "challenges-out", "waiting", "cancel")
    until(friend, lambda d: "No one has challenged you." in d.find_element(By.ID, "challenges-in").text)

    # The third, accepted from the keyboard: both pages move to the game.
    _challenge(browser, dora)
    _press(friend, "challenges-in", "challenges you", "accept", Keys.SPACE)
    (game, seat), (same, friend_seat) = _game(browser), _game(friend)
    assert game == same and (seat, friend_seat) == (0, 1)
    for person, other in ((browser, "<b>Dora</b>"), (friend, "<i>Cleo</i>")):  # each page sent its own
        until(person, functools.partial(_seeded_by, {"You", other}))
    assert console_errors(browser) == [] and console_errors(friend) == []
