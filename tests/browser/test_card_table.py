"""The card table as a person uses it, in a real browser against bots: the hand arranged by drag (SortableJS
in its fallback mode, which chromedriver's pointer actions drive) and from the keyboard, the order kept
across a reload; cards selected, then melded from the moves the selection makes, laid off by clicking
the meld, discarded by double-click, by the D key and by a drop on the pile; the stock clicked (and
pressed from the keyboard) to draw. No API call from the test: only clicks, drags and keys, and the
page's own attributes to find the cards. axe-core (pinned in tools/web) checks the table at desktop
and phone width for serious or critical violations; screenshots at both widths go to
tests/browser/screenshots/ (ignored by git)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver

from .conftest import GAME_S, Platform, console_errors, sign_in, start_quick_play, story, until

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
AXE = ROOT / "tools" / "web" / "node_modules" / "axe-core" / "axe.min.js"
DESKTOP = (1280, 900)
# How long the page may take to answer a click of hers: well under the table's turn time (30 s), so a
# click the page lost fails here rather than being answered by the engine's move when her time runs out.
ANSWER_S = 15.0
PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True}

# The table as the page shows it, in one round trip: is it over, what the moves bar and the full list
# offer (kind, the hand cards used, the meld), the hand's cards in order, and what is clickable.
_STATE = """
const q = (s) => [...document.querySelectorAll(s)];
const result = document.getElementById("result");
const move = (b) => ({kind: b.dataset.kind, cards: b.dataset.cards || "", meld: b.dataset.meld ?? null,
  label: b.textContent});
return {
  over: !result.hidden && result.textContent.includes("Game over"),
  dealOver: !result.hidden && result.textContent.includes("over"),
  all: q("#moves button.move").map(move),
  bar: q("#actions button.act").map(move),
  hand: q("#hand .card").map((c) => c.dataset.card),
  selected: q("#hand .card.selected").map((c) => c.dataset.card),
  stockLive: !!document.querySelector("#draw-stock.live"),
  targets: q("#melds .meld.target").map((m) => m.dataset.meld),
  message: document.getElementById("message").textContent,
};
"""


def _state(browser: WebDriver) -> dict[str, Any]:
    state: dict[str, Any] = browser.execute_script(_STATE)
    return state


def _hand_card(browser: WebDriver, key: str, nth: int = 0) -> Any:
    return browser.find_elements(By.CSS_SELECTOR, f"#hand .card[data-card='{key}']")[nth]


def _select(browser: WebDriver, keys: list[str]) -> None:
    """Click each card of `keys` in the hand (the second copy for a key asked twice)."""
    asked: dict[str, int] = {}
    for key in keys:
        _hand_card(browser, key, asked.get(key, 0)).click()
        asked[key] = asked.get(key, 0) + 1
    until(browser, lambda d: sorted(_state(d)["selected"]) == sorted(keys))


def _wait_for_change(browser: WebDriver, before: dict[str, Any]) -> None:
    """The page redrew after a move: the hand or the moves changed, or a refusal shows."""

    def changed(driver: WebDriver) -> bool:
        now = _state(driver)
        return now["hand"] != before["hand"] or now["all"] != before["all"] or "Refused" in now["message"]

    try:
        until(browser, changed, timeout_s=ANSWER_S)
    except TimeoutException:
        raise AssertionError(
            f"no answer to the click in {ANSWER_S} s\n{story(browser, _PLATFORM[0])}"
        ) from None
    assert "Refused" not in _state(browser)["message"], story(browser, _PLATFORM[0])


_PLATFORM: list[Platform] = []


class Person:
    """Plays by the table's controls, counting how each kind of control was used."""

    def __init__(self, browser: WebDriver) -> None:
        self.browser = browser
        self.used: dict[str, int] = {}
        self.selected_shot = False  # the table once, with cards selected and the moves they make offered

    def count(self, what: str) -> None:
        self.used[what] = self.used.get(what, 0) + 1

    def turn(self) -> bool:
        """One step of the game; False once it is over. A control redrawn under the click (a bot
        moved, a selection redrew the hand) is looked for again."""
        try:
            return self._turn()
        except StaleElementReferenceException:
            self.count("stale")
            return True

    def _turn(self) -> bool:
        b = self.browser
        state = _state(b)
        if state["over"]:
            return False
        kinds = {m["kind"] for m in state["all"]}
        if not state["all"]:
            until(b, lambda d: (s := _state(d))["over"] or s["all"], timeout_s=GAME_S)
            return True
        if "draw_from_stock" in kinds:
            if self.used.get("stock-key", 0) < 1:  # once from the keyboard: the stock is a button
                b.find_element(By.ID, "draw-stock").send_keys(Keys.ENTER)
                self.count("stock-key")
            else:
                b.find_element(By.ID, "draw-stock").click()
                self.count("stock-click")
        elif melds := [m for m in state["all"] if m["kind"] in ("go_out", "lay_melds")]:
            chosen = melds[0]
            _select(b, chosen["cards"].split())
            bar = _state(b)["bar"]
            assert any(m["label"] == chosen["label"] for m in bar), (chosen, bar)  # the selection offers it
            if not self.selected_shot:
                violations = _axe(b)
                assert violations == [], violations
                _shot(b, "table-selected")
                self.selected_shot = True
            buttons = b.find_elements(By.CSS_SELECTOR, "#actions button.act")
            next(button for button in buttons if button.text == chosen["label"]).click()
            self.count(chosen["kind"])
        elif layoffs := [m for m in state["all"] if m["kind"] == "lay_off"]:
            chosen = layoffs[0]
            _select(b, chosen["cards"].split())
            until(b, lambda d: chosen["meld"] in _state(d)["targets"])  # the meld it fits is marked
            b.find_element(By.CSS_SELECTOR, f"#melds .meld[data-meld='{chosen['meld']}']").click()

            def answered(driver: WebDriver) -> bool:  # laid off, or several ways offered (a run's ends)
                now = _state(driver)
                return now["hand"] != state["hand"] or "Several moves fit" in now["message"]

            until(b, answered, timeout_s=ANSWER_S)
            if _state(b)["hand"] == state["hand"]:
                b.find_element(By.CSS_SELECTOR, "#actions button.act").click()
            self.count("lay_off")
        elif discards := [m for m in state["all"] if m["kind"] == "discard"]:
            key = discards[-1]["cards"]
            done = sum(n for what, n in self.used.items() if what.startswith("discard-"))
            way = ("dblclick", "key", "drag")[done % 3]
            card = _hand_card(b, key)
            if way == "dblclick":
                ActionChains(b).double_click(card).perform()
            elif way == "key":
                card.click()  # focus (and select) it: the hand is redrawn, the focus kept; then D
                b.switch_to.active_element.send_keys("d")
            else:
                pile = b.find_element(By.ID, "discard-pile")
                chain = ActionChains(b).click_and_hold(card).move_by_offset(8, -8).move_to_element(pile)
                chain.pause(0.2).release().perform()
            self.count(f"discard-{way}")
        else:
            # Only moves of the pile (a Rummy 500 pick) or other: the first move of the full list.
            if not b.find_element(By.ID, "moves-box").get_attribute("open"):
                b.find_element(By.ID, "moves-box").click()
            b.find_element(By.CSS_SELECTOR, "#moves button.move").click()
            self.count("list")
        _wait_for_change(b, state)
        return True


def _axe(browser: WebDriver) -> list[dict[str, Any]]:
    """axe-core's serious and critical violations of the page as it is now."""
    browser.execute_script(AXE.read_text())
    found: list[dict[str, Any]] = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']}).then((r) => done(r.violations.map((v) =>"
        " ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target)}))))"
        ".catch((e) => done([{id: 'axe-error', impact: 'critical', help: String(e), nodes: []}]));"
    )
    return [v for v in found if v["impact"] in ("serious", "critical")]


def _shot(browser: WebDriver, name: str) -> Path:
    SCREENSHOTS.mkdir(exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    browser.save_screenshot(str(path))
    return path


@pytest.fixture
def desktop(browser: WebDriver, platform: Platform) -> Iterator[WebDriver]:
    if not AXE.is_file():
        pytest.fail(f"{AXE} missing: `make web-tools` installs the pinned axe-core")
    _PLATFORM[:] = [platform]
    size = browser.get_window_size()
    browser.set_window_size(*DESKTOP)
    try:
        yield browser
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        browser.set_window_size(size["width"], size["height"])


_ORDER = "return [...document.querySelectorAll('#hand .card')].map((c) => c.dataset.slot)"


def test_a_person_plays_rummy500_at_the_card_table(desktop: WebDriver, platform: Platform) -> None:
    b = desktop
    sign_in(b, platform, "tess")
    start_quick_play(b, "rummy500", 2, length="short")
    until(b, lambda d: len(_state(d)["hand"]) == 13)
    until(b, lambda d: _state(d)["stockLive"], timeout_s=GAME_S)  # her turn: no redraw until she moves
    # The cards are drawings, named for screen readers.
    first = b.find_element(By.CSS_SELECTOR, "#hand .card")
    assert first.find_element(By.TAG_NAME, "svg") and " of " in first.accessible_name, first.accessible_name

    # Arranged from the keyboard: Shift+Right moves the focused card one place right.
    order = b.execute_script(_ORDER)
    first.send_keys(Keys.SHIFT, Keys.ARROW_RIGHT)
    until(b, lambda d: d.execute_script(_ORDER) == [order[1], order[0], *order[2:]])

    # ... and by drag: the first card dropped beyond the fourth (retried if a bot's move redraws the hand).
    def dragged(driver: WebDriver) -> bool:
        cards = driver.find_elements(By.CSS_SELECTOR, "#hand .card")
        step = cards[3].location["x"] - cards[0].location["x"] + 20
        ActionChains(driver).click_and_hold(cards[0]).move_by_offset(10, 0).pause(0.1).move_by_offset(
            step - 10, 0
        ).pause(0.3).release().perform()
        return bool(driver.execute_script(_ORDER)[0] != order[1])

    until(b, dragged)
    arranged = b.execute_script(_ORDER)
    assert sorted(arranged) == sorted(order)
    b.refresh()  # the order is this browser's, kept across a reload
    until(b, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#hand .card")) == 13)
    assert b.execute_script(_ORDER) == arranged

    # The four-colour suits, switched on (and kept).
    b.find_element(By.ID, "four-colour").click()
    until(b, lambda d: "four-colour" in (d.find_element(By.TAG_NAME, "body").get_attribute("class") or ""))

    person = Person(b)
    checked = False
    deals_scored = 0
    deadline = time.monotonic() + 600
    while person.turn():
        assert time.monotonic() < deadline, story(b, platform)
        state = _state(b)
        if state["dealOver"] and not state["over"]:
            deals_scored += 1
        if not checked and len(b.find_elements(By.CSS_SELECTOR, "#melds .meld")) >= 1 and state["all"]:
            violations = _axe(b)
            assert violations == [], violations
            _shot(b, "table-desktop")
            checked = True
    until(b, lambda d: d.find_elements(By.ID, "scored"), timeout_s=GAME_S)  # scoring's result is shown
    result = b.find_element(By.ID, "result").text
    assert "Game over" in result and "tess:" in result, result
    _shot(b, "table-game-over")
    used = person.used
    assert used.get("stock-key") == 1 and used.get("stock-click", 0) >= 1, used
    assert all(used.get(f"discard-{way}", 0) >= 1 for way in ("dblclick", "key", "drag")), used
    assert used.get("lay_melds", 0) + used.get("go_out", 0) >= 1 and person.selected_shot, used
    assert console_errors(b) == [], console_errors(b)


def test_the_table_at_phone_width(desktop: WebDriver, platform: Platform) -> None:
    """At 390 x 844 the hand and the moves bar are on the screen without scrolling, nothing scrolls
    sideways, and axe finds nothing serious."""
    b = desktop
    b.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    sign_in(b, platform, "pim")
    start_quick_play(b, "kalooki", 2)
    until(b, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#hand .card")) == 13)
    until(b, lambda d: _state(d)["all"], timeout_s=GAME_S)
    b.execute_script("window.scrollTo(0, 0)")
    boxes = b.execute_script(
        "const r = (s) => [...document.querySelectorAll(s)].map((e) => e.getBoundingClientRect())"
        ".map((x) => [x.left, x.right, x.top, x.bottom]);"
        "return {width: document.documentElement.scrollWidth, screen: innerWidth, height: innerHeight,"
        " hand: r('#hand .card'), bar: r('#action-bar'), stock: r('#draw-stock')};"
    )
    assert boxes["screen"] == PHONE["width"] and boxes["width"] <= boxes["screen"], boxes
    for box in boxes["hand"] + boxes["bar"]:
        assert box[0] >= 0 and box[1] <= boxes["screen"] and box[3] <= boxes["height"], (box, boxes["height"])
    violations = _axe(b)
    assert violations == [], violations
    _shot(b, "table-phone")

    # Short animations, off for a person who asks the system for less motion.
    motion = "return getComputedStyle(document.querySelector('#hand .card')).transitionDuration"
    assert b.execute_script(motion) != "0s"
    reduce = [{"name": "prefers-reduced-motion", "value": "reduce"}]
    b.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": reduce})
    try:
        assert b.execute_script(motion) == "0s"
    finally:
        b.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})

    # "Your turn" in the title while the tab is in the background, and not once it is back.
    until(b, lambda d: d.find_element(By.ID, "turn-badge").is_displayed(), timeout_s=GAME_S)
    b.execute_script(_TITLES)
    table = b.current_window_handle
    b.switch_to.new_window("tab")
    time.sleep(1)
    b.close()
    b.switch_to.window(table)
    titles: list[str] = b.execute_script("return window.__titles")
    assert "● Your turn · meldstream" in titles and b.title == "meldstream", titles
    assert console_errors(b) == [], console_errors(b)


# Every title the page takes, recorded (a background tab's title cannot be read from another tab).
_TITLES = """
window.__titles = [];
new MutationObserver(() => window.__titles.push(document.title))
  .observe(document.querySelector("title"), {childList: true, characterData: true, subtree: true});
"""
