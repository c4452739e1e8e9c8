"""Personal API tokens from the account page, as a person makes them: a token with the scopes chosen,
its secret shown once (gone once she is done, and after a reload), listed by its name, used by a
program (exchanged at identity, then a call to the gateway with the access token), revoked, after
which the exchange is refused; and a bot account of hers with its own token, which signs in the bot."""

from __future__ import annotations

import json
import urllib.request

import grpc
import pytest
from rummy.identity.v1 import identity_pb2 as ipb
from rummy_client.identity import IdentityClient
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from .conftest import Platform, click, console_errors, screenshot, sign_in, until

pytestmark = pytest.mark.slow
LABEL = "<img src=x onerror=alert(1)> laptop"  # a label is text, never markup


def _secret(browser: WebDriver) -> str:
    until(browser, lambda d: d.find_element(By.ID, "token-secret").is_displayed())
    return str(browser.find_element(By.ID, "token-secret-text").get_attribute("value"))


def _rows(browser: WebDriver) -> list[list[str]]:
    """The token list as the person reads it: name, scopes, created."""
    rows = browser.find_elements(By.CSS_SELECTOR, "#token-list tr")
    return [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")][:3] for row in rows]


def _scopes(browser: WebDriver) -> list[str]:
    boxes = browser.find_elements(By.CSS_SELECTOR, "#token-scopes input[type=checkbox]")
    return [str(box.get_attribute("value")) for box in boxes]


def _exchanged(platform: Platform, secret: str) -> ipb.ExchangeApiTokenResponse:
    """What a program does with the token: exchange it at identity for an access token."""
    with IdentityClient(platform.identity) as program:
        reply: ipb.ExchangeApiTokenResponse = program.call(
            "ExchangeApiToken", ipb.ExchangeApiTokenRequest(api_token=secret)
        )
        return reply


def _me(platform: Platform, access_token: str) -> dict[str, object]:
    """A program's call to the gateway with that access token: who it is signed in as."""
    request = urllib.request.Request(
        f"{platform.url}/api/me", headers={"Authorization": f"Bearer {access_token}"}
    )
    with urllib.request.urlopen(request, timeout=10) as reply:
        answer: dict[str, object] = json.loads(reply.read())
        return answer


def test_make_see_once_use_and_revoke_a_token(browser: WebDriver, platform: Platform) -> None:
    sign_in(browser, platform, "tokie")
    click(browser, "tokens-link")
    until(browser, lambda d: d.find_element(By.ID, "tokens-page").is_displayed())
    until(browser, lambda d: _scopes(d) == ["play", "watch"])  # what identity lets a person's token carry
    assert browser.find_element(By.ID, "token-none").is_displayed()

    browser.find_element(By.CSS_SELECTOR, "#token-scopes input[value=play]").click()  # watch only
    browser.find_element(By.ID, "token-label").send_keys(LABEL)
    browser.find_element(By.ID, "token-create").click()
    secret = _secret(browser)
    until(browser, lambda d: len(_rows(d)) == 1)
    name, scopes, created = _rows(browser)[0]
    assert (name, scopes) == (LABEL, "watch") and created, _rows(browser)
    assert browser.find_elements(By.TAG_NAME, "img") == [] and secret not in (
        browser.find_element(By.ID, "token-list").get_attribute("innerHTML") or ""
    )
    click(browser, "token-copy")
    until(browser, lambda d: "Done" in d.find_element(By.ID, "message").text)
    screenshot(browser, "tokens-created")

    used = _exchanged(platform, secret)
    assert used.account.name == "tokie" and used.account.kind == ipb.ACCOUNT_KIND_HUMAN
    assert _me(platform, used.access_token) == {
        "player": used.account.account_id,
        "display_name": "tokie",
        "kind": "human",
    }

    click(browser, "token-done")  # shown once: gone from the page, and not back after a reload
    until(browser, lambda d: not d.find_element(By.ID, "token-secret").is_displayed())
    assert browser.find_element(By.ID, "token-secret-text").get_attribute("value") == ""
    browser.refresh()
    until(browser, lambda d: len(_rows(d)) == 1)
    assert (
        secret not in browser.page_source and not browser.find_element(By.ID, "token-secret").is_displayed()
    )

    click(browser, "token-list")  # (focus off the inputs)
    browser.find_element(By.CSS_SELECTOR, "#token-list button.revoke").click()
    until(browser, lambda d: d.find_element(By.ID, "token-none").is_displayed() and not _rows(d))
    assert "revoked" in browser.find_element(By.ID, "message").text
    with IdentityClient(platform.identity) as program, pytest.raises(grpc.RpcError) as refused:
        program.exchange(secret)
    assert refused.value.code() is grpc.StatusCode.UNAUTHENTICATED, refused.value.details()
    screenshot(browser, "tokens-revoked")
    assert console_errors(browser) == []


def test_a_bot_account_and_its_token(browser: WebDriver, platform: Platform) -> None:
    sign_in(browser, platform, "botowner")
    browser.get(f"{platform.url}/#/tokens")
    until(browser, lambda d: _scopes(d) == ["play", "watch"])
    browser.find_element(By.ID, "bot-name").send_keys("botowner-bot")
    browser.find_element(By.ID, "bot-display").send_keys('"><script>window.__pwned=1</script>')
    browser.find_element(By.ID, "bot-create").click()
    until(browser, lambda d: _scopes(d) == ["bot:play", "watch"])  # a bot's token: its scopes
    holder = browser.find_element(By.ID, "token-holder")
    bot_id = str(holder.get_attribute("value"))
    assert bot_id and "botowner-bot" in holder.text
    browser.find_element(By.CSS_SELECTOR, "#token-scopes input[value=watch]").click()  # bot:play only
    browser.find_element(By.ID, "token-label").send_keys("the bot's")
    browser.find_element(By.ID, "token-create").click()
    secret = _secret(browser)
    until(browser, lambda d: len(_rows(d)) == 1)
    assert _rows(browser)[0][:2] == ["the bot's", "bot:play"], _rows(browser)

    used = _exchanged(platform, secret)
    assert used.account.account_id == bot_id and used.account.kind == ipb.ACCOUNT_KIND_BOT
    assert used.account.display_name == '"><script>window.__pwned=1</script>'
    assert _me(platform, used.access_token)["kind"] == "bot"

    browser.refresh()  # the bot is listed again (this browser remembers it for her), its token too
    until(browser, lambda d: d.find_element(By.ID, "tokens-page").is_displayed())
    until(
        browser,
        lambda d: (
            bot_id
            in [
                str(o.get_attribute("value"))
                for o in d.find_elements(By.CSS_SELECTOR, "#token-holder option")
            ]
        ),
    )
    assert browser.execute_script("return window.__pwned ?? null") is None
    screenshot(browser, "tokens-bot")
    assert console_errors(browser) == []
