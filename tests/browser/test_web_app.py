"""A person in a real browser: plays a whole game against bots by clicking only the moves offered, watches a
live game, and steps through a replay; no page may log an error. Each test keeps a screenshot."""

from __future__ import annotations

import functools

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.select import Select

from .conftest import Platform, console_errors, screenshot, sign_in, until

pytestmark = pytest.mark.slow
# The move a person clicks when several are offered: going out or melding first, else draw, else discard.
PREFERENCE = ("go_out", "lay_melds", "lay_off", "draw_from_stock", "take_discard", "discard")
GAME_S = 120.0


def _offered(browser: WebDriver) -> list[WebElement]:
    return browser.find_elements(By.CSS_SELECTOR, "#moves button.move")


def _choose(moves: list[WebElement]) -> WebElement:
    kinds = [move.get_attribute("data-kind") for move in moves]
    for kind in PREFERENCE:
        if kind in kinds:
            return moves[kinds.index(kind)]
    return moves[0]


def _game_over(browser: WebDriver) -> bool:
    result = browser.find_element(By.ID, "result")
    return result.is_displayed() and "Game over" in result.text


def test_sign_in_and_play_a_game_against_bots_to_its_end(browser: WebDriver, platform: Platform) -> None:
    sign_in(browser, platform, "zoe")
    until(browser, lambda d: "games)" in d.find_element(By.ID, "rating").text)  # the rating, from matchmaking
    Select(browser.find_element(By.ID, "variant")).select_by_value("kalooki")  # one deal: a short game
    Select(browser.find_element(By.ID, "players")).select_by_value("2")
    browser.find_element(By.ID, "quickplay").click()
    until(browser, lambda d: d.find_element(By.ID, "table-page").is_displayed())
    until(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#hand .card")) == 13)
    assert "♠" in browser.find_element(By.ID, "hand").text or "♣" in browser.find_element(By.ID, "hand").text
    screenshot(browser, "table-start")
    clicks = 0
    while not _game_over(browser):
        until(browser, lambda d: _offered(d) or _game_over(d), timeout_s=GAME_S)
        moves = _offered(browser)
        if not moves or _game_over(browser):
            continue
        move = _choose(moves)
        try:
            move.click()
            until(browser, functools.partial(_stale, move), timeout_s=GAME_S)  # redrawn: the engine took it
        except StaleElementReferenceException:
            continue  # redrawn before the click landed (a bot moved): look again
        clicks += 1
        assert "Refused" not in browser.find_element(By.ID, "message").text, browser.find_element(
            By.ID, "message"
        ).text
    result = browser.find_element(By.ID, "result").text
    assert "winner:" in result and "zoe:" in result and "bot-ada:" in result, result
    until(browser, lambda d: d.find_elements(By.ID, "scored"))  # scoring's result reached the page
    screenshot(browser, "table-game-over")
    assert clicks > 2
    assert console_errors(browser) == []


def _stale(element: WebElement, _driver: WebDriver) -> bool:
    try:
        element.is_enabled()
    except StaleElementReferenceException:
        return True
    return False


def test_watch_a_live_game(browser: WebDriver, platform: Platform) -> None:
    platform.wait_for_line(r"table (\S+): ada, ben, cleo")  # the demo's table is being played
    sign_in(browser, platform, "spectator")
    until(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#live-games button.watch"))
    browser.find_element(By.CSS_SELECTOR, "#live-games button.watch").click()
    until(browser, lambda d: d.find_element(By.ID, "table-page").is_displayed())
    Select(browser.find_element(By.ID, "pace")).select_by_value("300")
    until(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#log li")) >= 3)
    assert not browser.find_element(By.ID, "hand-area").is_displayed()  # a spectator sees no hand
    seats = browser.find_element(By.ID, "seats").text
    assert all(name in seats for name in ("ada", "ben", "cleo")), seats
    screenshot(browser, "watch")
    assert console_errors(browser) == []


def test_step_through_a_replay(browser: WebDriver, platform: Platform) -> None:
    over = platform.wait_for_line(r"game (\S+) over after (\d+) events", timeout_s=120)
    game, events = over.group(1), int(over.group(2))
    sign_in(browser, platform, "ada")  # a player of the demo's game: its history is hers to see
    browser.get(f"{platform.url}/#/replay/{game}")
    until(browser, lambda d: d.find_element(By.ID, "replay-pos").text == f"1 / {events}")
    verify = browser.find_element(By.ID, "verify")
    assert "Shuffle verified" in verify.text and "ok" in (verify.get_attribute("class") or ""), verify.text
    for _ in range(5):
        browser.find_element(By.ID, "replay-next").click()
    until(browser, lambda d: d.find_element(By.ID, "replay-pos").text == f"6 / {events}")
    browser.find_element(By.ID, "replay-prev").click()
    until(browser, lambda d: d.find_element(By.ID, "replay-pos").text == f"5 / {events}")
    until(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".replay-hand")) == 3)  # every hand
    Select(browser.find_element(By.ID, "replay-seat")).select_by_value("1")
    until(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".replay-hand")) == 1)
    assert browser.find_element(By.CSS_SELECTOR, ".replay-hand").text.startswith("ben:")
    browser.find_element(By.ID, "replay-last").click()
    until(browser, lambda d: "game ended" in d.find_element(By.ID, "replay-event").text)
    screenshot(browser, "replay")
    assert console_errors(browser) == []
