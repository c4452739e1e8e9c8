"""A person in a real browser: plays a whole game against bots by clicking only the moves offered, watches a
live game, and steps through a replay; no page may log an error. Each test keeps a screenshot."""

from __future__ import annotations

import pytest
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.select import Select

from .conftest import (
    Move,
    Platform,
    click,
    console_errors,
    game_over,
    play,
    screenshot,
    sign_in,
    start_quick_play,
    story,
    until,
)

pytestmark = pytest.mark.slow
# The move a person clicks when several are offered: going out or melding first, else draw, else discard.
PREFERENCE = ("go_out", "lay_melds", "lay_off", "draw_from_stock", "take_discard", "discard")


def choose(_browser: WebDriver, moves: list[Move]) -> Move:
    kinds = [move.kind for move in moves]
    for wanted in PREFERENCE:
        if wanted in kinds:
            return moves[kinds.index(wanted)]
    return moves[0]


def test_sign_in_and_play_a_game_against_bots_to_its_end(browser: WebDriver, platform: Platform) -> None:
    for _ in range(3):
        sign_in(browser, platform, "zoe")
        until(browser, lambda d: "games)" in d.find_element(By.ID, "rating").text)  # from matchmaking
        start_quick_play(browser, "kalooki", 2)  # one deal: a short game
        until(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#hand .card")) == 13)
        # In one round trip: the hand is redrawn whenever a view arrives (a bot's move).
        hand = browser.execute_script(
            "return [...document.querySelectorAll('#hand .card')].map((c) => c.dataset.card || '')"
        )
        assert any(card.endswith(("S", "C")) for card in hand), hand  # drawn cards, each named by its key
        assert "at least 40 points" in browser.find_element(By.ID, "rules-note").text  # kalooki's opening
        screenshot(browser, "table-start")
        clicks = play(browser, choose)
        assert game_over(browser), story(browser, platform)
        if clicks > 2:
            break
        # The bot went out before she had played two turns (greedy bots on both seats: 4 games in
        # 4,000): a real game, too short to show clicking; but no move may have been made for her.
        assert "time ran out" not in browser.find_element(By.ID, "log").text, story(browser, platform)
    result = browser.find_element(By.ID, "result").text
    assert "winner:" in result and "zoe:" in result and "bot-ada [bot]:" in result, result
    until(browser, lambda d: d.find_elements(By.ID, "scored"))  # scoring's result reached the page
    screenshot(browser, "table-game-over")
    assert clicks > 2, f"{clicks} clicks in 3 games\n{story(browser, platform)}"
    assert console_errors(browser) == []


def test_watch_a_live_game(browser: WebDriver, platform: Platform) -> None:
    platform.wait_for_line(r"table (\S+): demo-ada, demo-ben, demo-cleo")  # the demo's table is being played
    sign_in(browser, platform, "wes-watching")
    demo_row = "//ul[@id='live-games']/li[contains(., 'demo-ada, demo-ben, demo-cleo')]"

    def demo_listed(driver: WebDriver) -> bool:
        driver.find_element(By.ID, "refresh-live").click()  # scoring lists a game once it follows it
        return bool(driver.find_elements(By.XPATH, demo_row))

    until(browser, demo_listed)
    listed = browser.find_element(By.ID, "live-games").text  # scoring's list of the platform's games
    assert "demo-ada, demo-ben, demo-cleo" in listed, listed
    # The demo's: other tests leave tables open (newer ones are listed first).
    demo = f"{demo_row}/button[@class='watch']"

    def watching(driver: WebDriver) -> bool:
        # The last refresh may redraw the list between finding the button and clicking it.
        if not driver.find_element(By.ID, "table-page").is_displayed():
            driver.find_element(By.XPATH, demo).click()
        return driver.find_element(By.ID, "table-page").is_displayed()

    until(browser, watching)
    Select(browser.find_element(By.ID, "pace")).select_by_value("300")
    until(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#log li")) >= 3)
    assert not browser.find_element(By.ID, "hand-area").is_displayed()  # a spectator sees no hand
    seats = browser.find_element(By.ID, "seats").text
    assert all(name in seats for name in ("ada", "ben", "cleo")), seats
    screenshot(browser, "watch")
    assert console_errors(browser) == []


def test_step_through_a_replay_read_from_the_export(browser: WebDriver, platform: Platform) -> None:
    over = platform.wait_for_line(r"game (\S+) over after (\d+) events", timeout_s=120)
    game, events = over.group(1), int(over.group(2))
    sign_in(browser, platform, "demo-ada")  # a player of the demo's game: its history is hers to see
    browser.get(f"{platform.url}/#/replay/{game}")
    until(browser, lambda d: d.find_element(By.ID, "replay-pos").text == f"1 / {events}")
    summary = browser.find_element(By.ID, "replay-summary").text  # the export's summary
    assert f"Game {game}: " in summary and "0 demo-ada, 1 demo-ben, 2 demo-cleo" in summary, summary
    assert "Winner: " in summary and f"{events} events" in summary, summary
    verify = browser.find_element(By.ID, "verify")
    assert "Shuffle verified" in verify.text and "ok" in (verify.get_attribute("class") or ""), verify.text
    exported = browser.execute_async_script(  # the document offered for download is the export format
        "fetch(arguments[0]).then((r) => r.json()).then(arguments[1])",
        browser.find_element(By.ID, "replay-download").get_attribute("href"),
    )
    assert exported["format"] == "meldstream.replay/1" and exported["game_id"] == game
    assert len(exported["events"]) == events and exported["finished"] is True
    for _ in range(5):
        browser.find_element(By.ID, "replay-next").click()
    until(browser, lambda d: d.find_element(By.ID, "replay-pos").text == f"6 / {events}")
    browser.find_element(By.ID, "replay-prev").click()
    until(browser, lambda d: d.find_element(By.ID, "replay-pos").text == f"5 / {events}")
    until(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".replay-hand")) == 3)  # every hand
    Select(browser.find_element(By.ID, "replay-seat")).select_by_value("1")  # ben's view: his export
    until(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".replay-hand")) == 1)
    assert browser.find_element(By.CSS_SELECTOR, ".replay-hand").text.startswith("demo-ben:")
    assert browser.find_element(By.ID, "replay-pos").text == f"5 / {events}"  # the same step
    browser.find_element(By.ID, "replay-last").click()
    until(browser, lambda d: "game ended" in d.find_element(By.ID, "replay-event").text)
    screenshot(browser, "replay")
    assert console_errors(browser) == []


_QUICK_PLAY = """
const done = arguments[arguments.length - 1];
const csrf = document.cookie.split("; ").find((c) => c.startsWith("ms_csrf=")).slice("ms_csrf=".length);
fetch("/api/quickplay", {method: "POST", body: JSON.stringify(arguments[0]), credentials: "same-origin",
  headers: {"Content-Type": "application/json", "X-CSRF-Token": decodeURIComponent(csrf)}})
  .then((reply) => reply.json()).then(done);
"""


def test_the_engine_plays_for_an_idle_player_and_the_replay_marks_it(
    browser: WebDriver, platform: Platform
) -> None:
    """A player who does nothing at a table with a 0.5 s turn limit: the engine plays for her, marks
    her away, she comes back (and idles again); the replay shows the timeouts, the away periods and
    every move the engine played, marked, as the export has them."""
    sign_in(browser, platform, "ida")
    table = {"variant": "kalooki", "players": 2, "turn_timeout_ms": 500}
    game = browser.execute_async_script(_QUICK_PLAY, table)["game_id"]
    browser.get(f"{platform.url}/#/play/{game}/0")
    until(browser, lambda d: d.find_element(By.ID, "return").is_displayed())  # three timeouts: away
    you = (By.CSS_SELECTOR, "#seats .seat.you")
    until(browser, lambda d: "away (engine plays)" in d.find_element(*you).text)
    browser.find_element(By.ID, "return").click()
    until(browser, lambda d: not d.find_element(By.ID, "return").is_displayed())
    try:
        until(browser, game_over, timeout_s=240)
    except TimeoutException as failure:  # once in a whole run (a 28 s game not over in 240 s)
        raise AssertionError(story(browser, platform)) from failure
    assert "Your time ran out: auto-" in browser.find_element(By.ID, "log").text
    click(browser, "open-replay")
    until(browser, lambda d: d.find_element(By.ID, "replay-pos").text.startswith("1 / "))
    exported = browser.execute_async_script(
        "fetch(arguments[0]).then((r) => r.json()).then(arguments[1])",
        browser.find_element(By.ID, "replay-download").get_attribute("href"),
    )
    summary = exported["summary"]
    assert len(summary["timeouts"]) >= 6 and len(summary["away_periods"]) >= 2, summary
    assert summary["away_periods"][0]["to"] is not None  # she came back
    engine_played = [entry["seq"] for entry in exported["events"] if entry["by_engine"]]
    marked = browser.find_elements(By.CSS_SELECTOR, "#replay-log li .engine")
    assert engine_played and len(marked) == len(engine_played)
    text = browser.find_element(By.ID, "replay-summary").text
    assert f"{len(summary['timeouts'])} timeout(s)" in text and "away period(s)" in text, text
    assert "Turn limit in force: 0.5 s" in text, text
    screenshot(browser, "replay-engine-played")
    assert console_errors(browser) == []
