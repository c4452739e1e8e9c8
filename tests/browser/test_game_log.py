"""The "What happened" log in words, in a real browser: filled from the engine's history, never from the
page's memory, so a reload mid-game shows the whole log again, and a late spectator reads the same
log worded for a spectator (the cards drawn from the stock hidden)."""

from __future__ import annotations

import re

import pytest
from selenium.webdriver.remote.webdriver import WebDriver

from .conftest import GAME_S, Move, Platform, page, play, sign_in, start_quick_play, story, until

pytestmark = pytest.mark.slow
_LOG = (
    'return [...document.querySelectorAll("#log li")].map((li) => [Number(li.dataset.seq), li.textContent]);'
)
_DRAWN = re.compile(r"You drew (\S+) from the stock")


def _draw_or_discard(_browser: WebDriver, moves: list[Move]) -> Move:
    kinds = [move.kind for move in moves]
    for wanted in ("draw_from_stock", "discard"):
        if wanted in kinds:
            return moves[kinds.index(wanted)]
    return moves[0]


def _log(browser: WebDriver) -> dict[int, str]:
    """The log's lines by seq (the page lists them newest first)."""
    return {int(seq): text for seq, text in browser.execute_script(_LOG)}


def _settled_log(browser: WebDriver) -> dict[int, str]:
    """The log once it is the person's turn again (nothing moves until she does)."""
    until(browser, lambda d: page(d).over or page(d).moves, timeout_s=GAME_S)
    return _log(browser)


def test_a_reload_and_a_late_spectator_read_the_whole_log(browser: WebDriver, platform: Platform) -> None:
    sign_in(browser, platform, "lena")
    start_quick_play(browser, "kalooki", 2)
    play(browser, _draw_or_discard, moves=4)  # two turns: two draws from the stock, two discards
    before = _settled_log(browser)
    assert len(before) >= 6 and any(_DRAWN.match(text) for text in before.values()), before
    game = browser.current_url.split("#/play/")[1].split("/")[0]

    browser.refresh()
    until(browser, lambda d: len(_log(d)) >= len(before), timeout_s=GAME_S)
    after = _log(browser)
    assert {seq: after[seq] for seq in before} == before, story(browser, platform)

    browser.get(f"{platform.url}/#/watch/{game}")
    until(browser, lambda d: len(_log(d)) >= len(before), timeout_s=GAME_S)
    watched = _log(browser)
    drawn = [seq for seq, text in before.items() if _DRAWN.match(text)]
    name = watched[drawn[0]].removesuffix(" drew from the stock")  # the card she drew is hers alone
    assert name.startswith("lena"), watched
    for seq, text in before.items():
        if seq in drawn:
            assert watched[seq] == f"{name} drew from the stock", (seq, watched[seq])
        else:  # the same sentence, worded for a spectator
            assert watched[seq] == re.sub(r"\b[Yy]ou\b", name, text), (seq, text, watched[seq])
    assert not any(re.search(r"\b[Yy]ou\b", text) for text in watched.values()), watched
