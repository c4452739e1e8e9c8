"""The app at phone width (390 x 844 CSS pixels, a touch screen, as Chrome's device emulation gives it):
the lobby, a Rummy 500 table (the widest: its whole pile is spread) while moves are played, and a
replay, with nothing scrolling sideways and the hand and the offered moves on the screen."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from .conftest import Move, Platform, console_errors, play, screenshot, sign_in, start_quick_play, until

pytestmark = pytest.mark.slow
PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True}
# The page's width against the screen's, and the boxes of the rendered elements a selector matches.
_MEASURE = """
// Elements not rendered at all (hidden, display: none; say chat's "Unmute all" while no one is muted) are
// not on the screen to be measured.
const shown = [...document.querySelectorAll(arguments[0])].filter((e) => e.getClientRects().length > 0);
const boxes = shown.map((e) => {
  const r = e.getBoundingClientRect();
  return [r.left, r.right, r.width, r.height];
});
return [document.documentElement.scrollWidth, window.innerWidth, boxes];
"""


@pytest.fixture
def phone(browser: WebDriver) -> Iterator[WebDriver]:
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    try:
        yield browser
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def _fits(browser: WebDriver, selector: str = "") -> int:
    """No sideways scrolling, and each element `selector` matches shown inside the screen's width;
    returns how many it matched."""
    width, screen, boxes = browser.execute_script(_MEASURE, selector or "nothing")
    # A page wider than a phone's screen widens its layout viewport (the page is shown zoomed out), so
    # the viewport's own width is checked too, not only the page's against it.
    assert screen == PHONE["width"] and width <= screen, (width, screen)
    outside = [box for box in boxes if box[0] < 0 or box[1] > screen or not (box[2] and box[3])]
    assert not outside, (selector, outside)
    return len(boxes)


def _choose(_browser: WebDriver, moves: list[Move]) -> Move:
    for kind in ("go_out", "lay_melds", "lay_off", "pick_from_pile", "draw_from_stock", "discard"):
        for move in moves:
            if move.kind == kind:
                _fits(_browser, "#moves button.move")  # every offered move is on the screen
                return move
    return moves[0]


def test_play_and_replay_at_phone_width(phone: WebDriver, platform: Platform) -> None:
    sign_in(phone, platform, "pia")
    _fits(phone, "#lobby-page button:not([hidden])")  # chat's "unmute all" waits hidden for a mute
    screenshot(phone, "phone-lobby")
    start_quick_play(phone, "rummy500", 2)
    assert _fits(phone, "#hand .card") == 13
    for _ in range(6):  # a few turns: the pile grows, melds are laid
        play(phone, _choose, moves=3)
        _fits(phone, "#hand .card, #discard-pile .card, #melds .meld, #table-info, #seats .seat")
    until(phone, lambda d: d.find_elements(By.CSS_SELECTOR, "#moves button.move"))
    assert _fits(phone, "#moves button.move") >= 1 and _fits(phone, "#hand .card") >= 1
    phone.execute_script("document.getElementById('moves').scrollIntoView()")
    screenshot(phone, "phone-table")

    over = platform.wait_for_line(r"game (\S+) over after (\d+) events", timeout_s=120)
    sign_in(phone, platform, "demo-ada")  # a player of the demo's game
    phone.get(f"{platform.url}/#/replay/{over.group(1)}")
    until(phone, lambda d: d.find_element(By.ID, "replay-pos").text.startswith("1 / "))
    phone.find_element(By.ID, "replay-last").click()
    until(phone, lambda d: "game ended" in d.find_element(By.ID, "replay-event").text)
    _fits(phone, "#replay-page button, .replay-hand, #replay-summary, #replay-log li")
    screenshot(phone, "phone-replay")
    assert console_errors(phone) == []
