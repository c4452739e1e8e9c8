"""The page in another language: switched on the page (and remembered), its words and the log in words
from the catalogue, with the language's own plural forms ("13 карт", not "13 cards"), and back."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.select import Select

from .conftest import Platform, console_errors, screenshot, sign_in, start_quick_play, story, until

pytestmark = pytest.mark.slow


def _seats(browser: WebDriver) -> str:
    return str(browser.find_element(By.ID, "seats").text)


def test_switch_the_table_to_russian_and_back(browser: WebDriver, platform: Platform) -> None:
    sign_in(browser, platform, "ilse")
    start_quick_play(browser, "kalooki", 2)
    until(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#hand .card")) == 13)
    until(browser, lambda d: "13 cards" in _seats(d) or "14 cards" in _seats(d))
    assert browser.find_element(By.ID, "hand-title").text == "Your hand"

    Select(browser.find_element(By.ID, "language")).select_by_value("ru")
    # 13 and 14 are CLDR's "many" in Russian: "13 карт"; the log is worded again by the gateway.
    until(browser, lambda d: "13 карт" in _seats(d) or "14 карт" in _seats(d))
    until(browser, lambda d: "Началась игра в Калуки на 2 игрока." in d.find_element(By.ID, "log").text)
    assert browser.find_element(By.ID, "hand-title").text == "Ваши карты"
    assert browser.execute_script("return document.documentElement.lang") == "ru"
    assert "cards" not in _seats(browser), story(browser, platform)
    screenshot(browser, "table-russian")

    browser.refresh()  # the choice is remembered
    until(browser, lambda d: "13 карт" in _seats(d) or "14 карт" in _seats(d))
    Select(browser.find_element(By.ID, "language")).select_by_value("en")
    until(browser, lambda d: "13 cards" in _seats(d) or "14 cards" in _seats(d))
    until(browser, lambda d: "A game of Kalooki for 2 players began." in d.find_element(By.ID, "log").text)
    assert browser.find_element(By.ID, "hand-title").text == "Your hand"
    assert console_errors(browser) == []
