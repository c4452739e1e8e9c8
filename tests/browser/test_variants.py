"""Every variant played to its end in a real browser, against bots, by clicking only the moves the page
offers, each with what is its own: Rummy 500's picks from deep in the spread pile (through a click on
the pile's card), contract rummy's buy window and round contract, Rummy 40's opening minimum. Rummy
500 plays its whole match (to 500, several deals); contract and Rummy 40 their short one (round 1, one
deal), kept short for time. Each test keeps a screenshot of the finished table."""

from __future__ import annotations

import re

import pytest
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from .conftest import (
    Move,
    Platform,
    console_errors,
    game_over,
    page,
    play,
    screenshot,
    sign_in,
    start_quick_play,
    until,
)

pytestmark = pytest.mark.slow
TURN = ("go_out", "lay_melds", "lay_off", "swap_joker", "pick_from_pile", "draw_from_stock", "take_discard")


def _first(moves: list[Move], kinds: tuple[str, ...]) -> Move | None:
    for wanted in kinds:
        for move in moves:
            if move.kind == wanted:
                return move
    return None


def _finish(browser: WebDriver, name: str) -> str:
    assert game_over(browser)
    result = browser.find_element(By.ID, "result").text
    assert "winner:" in result, result
    until(browser, lambda d: d.find_elements(By.ID, "scored"))  # scoring's result reached the page
    screenshot(browser, name)
    assert console_errors(browser) == []
    return result


# What the page showed when a click on a pile card listed nothing: the message, the pile, the moves.
_PILE_STATE = """
const html = (id) => (document.getElementById(id) || {outerHTML: "(none)"}).outerHTML.slice(0, 3000);
return {message: document.getElementById("message").textContent, pile: html("discard-pile"),
  moves: html("moves"), actions: html("actions")};
"""


class DeepPicker:
    """Rummy 500 as a greedy person: melds first, then the deepest pile card that can be used, picked
    by clicking it in the pile (the page then lists only its uses), else the stock."""

    def __init__(self) -> None:
        self.picks: list[tuple[int, int]] = []  # (index picked, pile size then)

    def __call__(self, browser: WebDriver, moves: list[Move]) -> Move:
        melding = _first(moves, ("go_out", "lay_melds", "lay_off"))
        if melding is not None:
            return melding
        picks = [move.index for move in moves if move.index is not None]
        if not picks:
            return _first(moves, TURN) or moves[0]
        index = min(picks)
        pile = browser.find_elements(By.CSS_SELECTOR, "#discard-pile .card[data-index]")
        browser.find_element(By.CSS_SELECTOR, f"#discard-pile .card.pickable[data-index='{index}']").click()
        try:
            until(browser, lambda d: d.find_elements(By.ID, "all-moves"))  # only that card's uses listed
        except TimeoutException:  # once in CI, under load: keep what explains it
            state = browser.execute_script(_PILE_STATE)
            console = browser.execute("getLog", {"type": "browser"})["value"]
            shown = f"{state}\n{console}"
            raise AssertionError(f"pile card {index} clicked, its uses never listed: {shown}") from None
        uses = page(browser).moves
        assert uses and all(move.index == index for move in uses), [move.index for move in uses]
        self.picks.append((index, len(pile)))
        return uses[0]


def test_rummy500_to_its_end_picking_deep_from_the_pile(browser: WebDriver, platform: Platform) -> None:
    sign_in(browser, platform, "rita")
    start_quick_play(browser, "rummy500", 2)  # a whole game, to 500 points
    assert "Any card of the discard pile" in browser.find_element(By.ID, "rules-note").text
    picker = DeepPicker()
    clicks = play(browser, picker)
    result = _finish(browser, "rummy500-game-over")
    assert "rita:" in result and clicks > 10
    assert any(index < size - 1 for index, size in picker.picks), picker.picks  # below the top card


class Buyer:
    """Contract rummy as a greedy person who buys the first card offered them each round, then passes,
    answering at the buy window's prompt."""

    def __init__(self) -> None:
        self.bought = 0
        self.passed = 0
        self.offers: list[str] = []  # the buy window as shown, when the card was offered

    def __call__(self, browser: WebDriver, moves: list[Move]) -> Move:
        buy, decline = _first(moves, ("buy_discard",)), _first(moves, ("pass_buy",))
        if buy is not None and decline is not None:
            offer = browser.find_element(By.ID, "offer")
            self.offers.append(offer.text if offer.is_displayed() else "")
            me = browser.find_element(By.CSS_SELECTOR, "#seats .seat.you").text
            # Answered at the buy window's own prompt (beside its clock), not from the list of moves.
            answer = "buy_discard" if "buys 0" in me else "pass_buy"
            prompt = browser.find_element(By.CSS_SELECTOR, f"#offer.prompt button[data-kind='{answer}']")
            if answer == "buy_discard":
                self.bought += 1
            else:
                self.passed += 1
            return Move(prompt, answer, None)
        return _first(moves, TURN) or _first(moves, ("discard",)) or moves[0]


def test_contract_to_its_end_with_the_buy_window(browser: WebDriver, platform: Platform) -> None:
    sign_in(browser, platform, "cora")
    # Three seats, so a bot's discard may be bought by the person while the other bot is to draw; the
    # match is round 1 only (option last_round, the variant's shortest): eight rounds are ~400 clicks.
    start_quick_play(browser, "contract", 3, length="short")
    note = browser.find_element(By.ID, "rules-note").text
    assert "Round 1 (a one-round match): contract 1 run and 1 three" in note, note
    assert "round 1: contract 1 run and 1 three" in browser.find_element(By.ID, "table-info").text
    buyer = Buyer()
    play(browser, buyer, lost_race="asked to buy .* first")  # the upcard: a bot may ask before cora
    result = _finish(browser, "contract-game-over")
    assert "cora:" in result
    assert buyer.bought >= 1 and buyer.passed >= 1, (buyer.bought, buyer.passed)
    until(browser, lambda d: "buys 1" in d.find_element(By.CSS_SELECTOR, "#seats .seat.you").text)
    assert any(
        re.match(r"Buy window: \S+ (discarded by bot-\w+ \[bot\]|\(the upcard\)) is on offer", offer)
        for offer in buyer.offers
    ), buyer.offers
    log = browser.find_element(By.ID, "log").text
    assert "You asked to buy" in log, log


def test_rummy40_to_its_end_with_its_opening_minimum(browser: WebDriver, platform: Platform) -> None:
    sign_in(browser, platform, "remo")
    # One deal (option deals_per_match, the short match): the opening rules are the first deal's, and
    # whole matches of several deals are Rummy 500's test; six deals here take 45-90 s more.
    start_quick_play(browser, "rummy40", 2, length="short")
    assert "at least 40 points" in browser.find_element(By.ID, "rules-note").text
    play(browser, lambda _browser, moves: _first(moves, (*TURN, "discard")) or moves[0])
    result = _finish(browser, "rummy40-game-over")
    assert "remo:" in result
