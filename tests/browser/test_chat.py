"""The lobby's chat in chromium: a hostile line from another account (`<img src=x onerror=alert(1)>`)
is shown as the text typed, runs nothing and draws no image; Mute hides that account's lines at once,
keeps its next lines away, and a reload still leaves them out (the mute is the account's, kept by the
gateway), until Unmute all. The line, reported, is on the operators' page with the line before it, as
text. The other account posts through the chat route with its own token, as another page would."""

from __future__ import annotations

import json
import urllib.request

from rummy_client.identity import IdentityClient
from rummy_identity.testing import PASSWORD
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from .conftest import Platform, console_errors, screenshot, sign_in, until

HOSTILE = "<img src=x onerror=alert(1)>"


def _texts(browser: WebDriver) -> list[str]:
    return [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#chat-lines .chat-text")]


def _say(platform: Platform, token: str, text: str) -> None:
    request = urllib.request.Request(
        f"{platform.url}/api/chat/lobby",
        data=json.dumps({"text": text}).encode(),
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as reply:
        assert reply.status == 200


def _type(browser: WebDriver, text: str) -> None:
    browser.find_element(By.ID, "chat-text").send_keys(text)
    browser.find_element(By.CSS_SELECTOR, "#chat-form button[type=submit]").click()
    until(browser, lambda d: text in _texts(d))


def test_a_hostile_line_is_text_and_a_mute_hides_it(browser: WebDriver, platform: Platform) -> None:
    client = IdentityClient(platform.identity)
    mallory = client.session_token(client.sign_up("chat-mallory", PASSWORD, display_name="Mallory"))
    client.close()
    sign_in(browser, platform, "chat-eve", "Eve")
    until(browser, lambda d: d.find_element(By.ID, "chat-text").is_displayed())
    _type(browser, "hello from eve")
    _say(platform, mallory(), HOSTILE)
    until(browser, lambda d: HOSTILE in _texts(d))
    assert browser.find_elements(By.CSS_SELECTOR, "#chat img") == []
    screenshot(browser, "chat-hostile-line")
    assert console_errors(browser) == []

    browser.find_element(By.CSS_SELECTOR, "#chat-lines li[data-author] .chat-report").click()
    until(browser, lambda d: d.find_element(By.CSS_SELECTOR, ".chat-report").text == "Reported")
    mute = browser.find_element(By.CSS_SELECTOR, "#chat-lines li[data-author] .chat-mute")
    assert mute.get_attribute("aria-label") == "Mute Mallory"
    mute.click()
    until(browser, lambda d: HOSTILE not in _texts(d))
    _say(platform, mallory(), "after the mute")
    _type(browser, "eve again")  # one topic, one order: mallory's line would have come before it
    assert "after the mute" not in _texts(browser)

    browser.refresh()
    until(browser, lambda d: "eve again" in _texts(d))
    assert _texts(browser) == ["hello from eve", "eve again"]
    unmute = browser.find_element(By.ID, "chat-unmute")
    assert unmute.text == "Unmute all (1)"
    unmute.click()
    until(browser, lambda d: not d.find_element(By.ID, "chat-unmute").is_displayed())
    _say(platform, mallory(), "back again")
    until(browser, lambda d: "back again" in _texts(d))
    assert console_errors(browser) == []

    platform.operator()
    sign_in(browser, platform, "ops")
    browser.get(f"{platform.url}/operate/chat")
    until(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#reports .reported"))
    reported = browser.find_element(By.CSS_SELECTOR, "#reports .reported").text
    assert reported.endswith(f": {HOSTILE}")
    context = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#reports li li")]
    assert any(line.endswith(": hello from eve") for line in context)
    assert browser.find_elements(By.CSS_SELECTOR, "#reports img") == []
    assert console_errors(browser) == []
