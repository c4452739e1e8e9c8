"""Two people in two browsers at a private table: the host invites by the link the platform made; the
friend opens it signed out, plays as a guest and is back at the table, sees who is at it and what is
played (the time bank the host chose from the keyboard among it), and joins. Both pages move to the
game, which they play to its end by clicking what each page offers (Rummy 500's short match, to 100
points); then both accept the rematch from the table's page, and the friend, opening the link again, is
back at their seat of the new game."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

import pytest
from selenium.common.exceptions import StaleElementReferenceException
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
    screenshot,
    sign_in,
    story,
    until,
)

pytestmark = pytest.mark.slow
TURN = ("go_out", "lay_melds", "lay_off", "pick_from_pile", "draw_from_stock", "take_discard", "discard")
RANKS = ["JK", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]  # cards.js
GAME_HASH = re.compile(r"#/play/(pt-[0-9a-f]+)/(\d)$")


@pytest.fixture
def friend() -> Iterator[WebDriver]:
    """The second person's own browser."""
    driver = open_chromium()
    try:
        yield driver
    finally:
        driver.quit()


def _choose(moves: list[Move]) -> Move:
    """A person who melds whenever the page offers it, picks from the pile when a pick is offered (it
    is offered only where the card can be melded), else draws from the stock, and discards the card
    that helps their hand least (no pair, no neighbour of its suit), so that a deal of two people
    ends in a few dozen moves rather than in stock cycles nobody melds in."""
    for kind in TURN:
        offered = [move for move in moves if move.kind == kind]
        if offered:
            if kind == "pick_from_pile":  # the top card the page offers: the fewest cards taken
                return max(offered, key=lambda move: move.index or 0)
            return _least_useful(offered) if kind == "discard" else offered[0]
    return moves[0]


def _least_useful(discards: list[Move]) -> Move:
    """Of the discard moves (one per card of the hand), the one of the card with the fewest cards of
    its rank or near it in its suit in the hand, the highest first (its points count against it)."""
    hand = [(move, _card(str(move.element.get_attribute("data-cards")))) for move in discards]

    def helps(card: tuple[int, str]) -> int:
        rank, suit = card
        if rank == 0:
            return 99  # a joker fits anywhere
        return sum(r == rank or (s == suit and 0 < abs(r - rank) <= 2) for r, s in (c for _, c in hand))

    return min(hand, key=lambda item: (helps(item[1]), -item[1][0]))[0]


def _card(text: str) -> tuple[int, str]:
    """The rank (A 1 to K 13, 0 a joker) and suit letter of a card as the page names it ("10H")."""
    if text.startswith("JK"):
        return 0, ""
    return RANKS.index(text[:-1]), text[-1]


def _game(browser: WebDriver) -> tuple[str, int]:
    """The game and seat the page moved to."""
    until(browser, lambda d: GAME_HASH.search(d.current_url), timeout_s=GAME_S)
    found = GAME_HASH.search(browser.current_url)
    assert found is not None
    until(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#hand .card"))
    return found[1], int(found[2])


def _play_both(people: tuple[WebDriver, WebDriver]) -> int:
    """Each page clicks a move when it offers one, until both show the game over; the clicks made."""
    clicks = 0
    while True:
        shown = [page(person) for person in people]
        if all(p.over for p in shown):
            return clicks
        moved = False
        for person, now in zip(people, shown, strict=True):
            if now.over or not now.moves:
                continue
            try:
                move = _choose(now.moves)
                move.element.click()
                until(person, functools.partial(_answered, move.element), timeout_s=GAME_S)
            except StaleElementReferenceException:
                continue  # redrawn before the click landed: look again
            message = person.find_element(By.ID, "message").text
            assert "Refused" not in message, message
            clicks += 1
            moved = True
        if not moved:  # neither page offers a move yet: wait until one does
            until(people[0], lambda _d: any(page(p).over or page(p).moves for p in people), timeout_s=GAME_S)


def test_two_people_join_by_the_link_play_to_the_end_and_rematch(
    browser: WebDriver, friend: WebDriver, platform: Platform
) -> None:
    host = browser
    sign_in(host, platform, "hana")
    Select(host.find_element(By.ID, "variant")).select_by_value("rummy500")
    Select(host.find_element(By.ID, "players")).select_by_value("2")
    Select(host.find_element(By.ID, "length")).select_by_value("short")
    host.find_element(By.ID, "time-bank").send_keys("2")  # chosen from the keyboard: "2 min"
    assert (
        Select(host.find_element(By.ID, "time-bank")).first_selected_option.get_attribute("value") == "120000"
    )
    click(host, "invite")
    until(host, lambda d: d.find_element(By.ID, "private-page").is_displayed())
    until(host, lambda d: d.find_element(By.ID, "private-link").get_attribute("value"))
    link = str(host.find_element(By.ID, "private-link").get_attribute("value"))
    assert re.fullmatch(r"http://[^/]+/#/table/pt-[A-Za-z0-9_-]{22}", link), link

    # The friend opens the link before signing in, plays as a guest, and is at the table: who is at
    # it and what is played; then joins.
    friend.get(link)
    until(friend, lambda d: d.find_element(By.ID, "signin-page").is_displayed())
    friend.find_element(By.ID, "signup-display").send_keys("Gus")
    click(friend, "guest-btn")
    until(friend, lambda d: "1 of 2 seats taken" in d.find_element(By.ID, "private-info").text)
    console_errors(friend)  # the signed-out page's 401 from /api/me is expected
    assert "rummy500" in friend.find_element(By.ID, "private-info").text
    assert "time bank 120 s" in friend.find_element(By.ID, "private-info").text  # the host's clock
    assert "hana (host)" in friend.find_element(By.ID, "private-players").text
    click(friend, "private-join")
    (game, host_seat), (same, friend_seat) = _game(host), _game(friend)
    assert game == same and {host_seat, friend_seat} == {0, 1}
    try:
        clicks = _play_both((host, friend))
    except Exception as failure:
        raise AssertionError(story(host, platform) + "\n" + story(friend, platform)) from failure
    assert clicks > 4
    for person in (host, friend):
        assert "winner:" in person.find_element(By.ID, "result").text
    screenshot(friend, "private-table-game-over")

    # The rematch, from the table's page once scoring has the result: the game starts when both accept.
    for person in (host, friend):
        click(person, "back-to-table")
        until(person, lambda d: d.find_elements(By.ID, "rematch"), timeout_s=GAME_S)
        click(person, "rematch")
    (second, _), (again, seat) = _game(host), _game(friend)
    assert second == again and second != game and seat == friend_seat

    friend.get(platform.url)  # leaves the page, then opens the link again: back at the seat
    until(friend, lambda d: d.find_element(By.ID, "lobby-page").is_displayed())
    friend.get(link)
    assert _game(friend) == (second, friend_seat)
    assert console_errors(host) == [] and console_errors(friend) == []
