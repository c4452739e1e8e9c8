"""Signing in with the operator's OpenID provider, as a person does it, against a real provider.

The provider is zitadel/oidc's example OpenID provider (deploy/local/oidc-provider: built once by
`make setup` into .local/bin/oidc-provider, from the Go module proxy), with its own login page and
users of this test's; identity (`python -m rummy_identity`) and the web gateway (`python -m
meldstream_web`) run as processes configured for it, and Debian's chromium clicks through: "Sign in
with ...", the provider's login form, back in the lobby under the provider's name for that person.
The same person signing in again is the same account; suspended, they are refused; a sign-in the
browser did not start is refused; a display name of markup from the provider is only text.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from rummy.identity.v1 import identity_pb2 as pb
from rummy_identity.accounts import provider_name
from rummy_identity.testing import IdentityProcess
from rummy_infra.local import free_port
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from .conftest import screenshot, until

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
PROVIDER = ROOT / ".local" / "bin" / "oidc-provider"
PASSWORD = "verysecure"
HOSTILE = '<img src=x onerror="window.__pwned=1">'
USERS = {
    "ann-1": {"Username": "ann@example", "FirstName": "Ann", "LastName": "Provider"},
    "mallory-1": {"Username": "mallory@example", "FirstName": HOSTILE, "LastName": "\u202eevil"},
}
START_S = 60.0


@dataclass
class Setup:
    issuer: str
    gateway: str
    identity: IdentityProcess


def _wait_http(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except (urllib.error.URLError, OSError):
            time.sleep(0.1)
    raise AssertionError(f"{url} did not answer:\n{log.read_text()[-3000:]}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    """The provider, identity and the gateway, each its own process, on free loopback ports."""
    if not os.access(PROVIDER, os.X_OK):
        message = (
            f"{PROVIDER.relative_to(ROOT)} is not built: `make setup` builds it (deploy/local/oidc-provider)"
        )
        if os.environ.get("CI"):
            pytest.fail(message)  # CI runs make setup: missing there is a broken setup
        pytest.skip(message)
    here = tmp_path_factory.mktemp("oidc")
    provider_port, gateway_port = free_port(), free_port()
    issuer = f"http://localhost:{provider_port}/"
    gateway = f"http://127.0.0.1:{gateway_port}"
    users = here / "users.json"
    users.write_text(
        json.dumps(
            {
                subject: {"ID": subject, "Password": PASSWORD, "PreferredLanguage": "en", **user}
                for subject, user in USERS.items()
            }
        )
    )
    provider_log = here / "provider.log"
    with provider_log.open("wb") as out:
        provider = subprocess.Popen(
            [str(PROVIDER)],
            env={
                "PATH": os.environ.get("PATH", ""),
                "PORT": str(provider_port),
                "REDIRECT_URI": f"{gateway}/api/oidc/callback",
                "USERS_FILE": str(users),
            },
            stdout=out,
            stderr=out,
        )
    identity = IdentityProcess({"IDENTITY_OIDC_ISSUER": issuer, "IDENTITY_OIDC_CLIENT_ID": "web"})
    gateway_log = here / "gateway.log"
    web: subprocess.Popen[bytes] | None = None
    try:
        _wait_http(f"{issuer}.well-known/openid-configuration", provider, provider_log)
        identity.start()
        env = {
            **os.environ,
            **identity.service_env("web"),
            "MELDSTREAM_DEV": "1",
            "WEB_ADDRESS": f"127.0.0.1:{gateway_port}",
            "ENGINE_ADDRESS": f"127.0.0.1:{free_port()}",  # no game is played here: nobody listens
            "MATCHMAKING_ADDRESS": f"127.0.0.1:{free_port()}",
            "SCORING_ADDRESS": f"127.0.0.1:{free_port()}",
            "WEB_OIDC_ISSUER": issuer,
            "WEB_OIDC_CLIENT_ID": "web",
            "WEB_OIDC_CLIENT_SECRET": "secret",
            "WEB_OIDC_NAME": "Example ID",
        }
        with gateway_log.open("wb") as out:
            web = subprocess.Popen([sys.executable, "-m", "meldstream_web"], env=env, stdout=out, stderr=out)
        _wait_http(f"{gateway}/api/oidc", web, gateway_log)
        yield Setup(issuer, gateway, identity)
    finally:
        if web is not None:
            _stop(web)
        identity.stop()
        _stop(provider)


@pytest.fixture
def page(browser: WebDriver, setup: Setup) -> Iterator[WebDriver]:
    """The browser with no cookie of anyone's (the provider's, the gateway's), at the gateway's page."""
    browser.execute_cdp_cmd("Network.clearBrowserCookies", {})
    browser.get(setup.gateway)
    until(browser, lambda d: d.find_element(By.ID, "signin-page").is_displayed())
    yield browser
    browser.execute_cdp_cmd("Network.clearBrowserCookies", {})


def _provider_sign_in(browser: WebDriver, setup: Setup, username: str) -> None:
    """From the sign-in page: the provider's button, then its login form, filled and sent."""
    until(browser, lambda d: d.find_element(By.ID, "provider-btn").is_displayed())
    assert browser.find_element(By.ID, "provider-btn").text == "Sign in with Example ID"
    browser.find_element(By.ID, "provider-btn").click()
    until(browser, lambda d: d.current_url.startswith(setup.issuer) and d.find_elements(By.ID, "username"))
    screenshot(browser, "provider-login-page")
    browser.find_element(By.ID, "username").send_keys(username)
    browser.find_element(By.ID, "password").send_keys(PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    until(browser, lambda d: d.current_url.startswith(setup.gateway))


def _me(browser: WebDriver) -> dict[str, Any]:
    found = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch('/api/me', {credentials: 'same-origin'})"
        ".then((r) => r.json()).then(done, (e) => done(String(e)));"
    )
    assert isinstance(found, dict), found
    return found


def _signed_in(browser: WebDriver) -> str:
    until(browser, lambda d: d.find_element(By.ID, "lobby-page").is_displayed())
    return str(browser.find_element(By.ID, "who").text)


def _sign_out(browser: WebDriver) -> None:
    browser.find_element(By.ID, "signout").click()
    until(browser, lambda d: d.find_element(By.ID, "signin-page").is_displayed())


def _failure(browser: WebDriver) -> str:
    until(browser, lambda d: "failed" in d.find_element(By.ID, "message").text)
    assert browser.find_element(By.ID, "signin-page").is_displayed()
    return str(browser.find_element(By.ID, "message").text)


def test_a_person_signs_in_with_the_provider_and_is_the_same_account_next_time(
    page: WebDriver, setup: Setup
) -> None:
    _provider_sign_in(page, setup, "ann@example")
    assert _signed_in(page) == "signed in as Ann Provider"
    screenshot(page, "provider-signed-in")
    first = _me(page)
    assert first["display_name"] == "Ann Provider" and first["kind"] == "human", first
    assert page.current_url.endswith("/#/lobby")
    cookies = {c["name"]: c for c in page.execute_cdp_cmd("Network.getAllCookies", {})["cookies"]}
    assert cookies["ms_refresh"]["httpOnly"] and cookies["ms_refresh"]["sameSite"] == "Strict", cookies
    assert "__Host-ms_oidc" not in cookies, cookies  # the flow's cookie is gone once used
    _sign_out(page)

    _provider_sign_in(page, setup, "ann@example")
    assert _signed_in(page) == "signed in as Ann Provider"
    assert _me(page)["player"] == first["player"]
    ops = setup.identity.operator()
    account = setup.identity.call(
        "GetAccount", pb.GetAccountRequest(name=provider_name(setup.issuer, "ann-1")), ops.token
    ).account
    assert account.account_id == first["player"] and account.sessions == 1  # the first signed out
    _sign_out(page)

    suspend = pb.SetAccountStatusRequest(
        name=account.name, status=pb.ACCOUNT_STATUS_SUSPENDED, reason="provider sign-in test"
    )
    setup.identity.call("SetAccountStatus", suspend, ops.token)
    _provider_sign_in(page, setup, "ann@example")
    assert "Sign-in with Example ID failed (suspended)" in _failure(page)
    screenshot(page, "provider-suspended")
    assert _me(page)["player"] is None


def test_a_display_name_of_markup_from_the_provider_is_only_text(page: WebDriver, setup: Setup) -> None:
    _provider_sign_in(page, setup, "mallory@example")
    who = _signed_in(page)
    assert who == f"signed in as {HOSTILE} evil", who  # as typed, less the right-to-left override
    assert page.execute_script("return window.__pwned === undefined && !document.querySelector('#who img')")


def test_a_sign_in_the_browser_did_not_start_is_refused(page: WebDriver, setup: Setup) -> None:
    page.get(f"{setup.gateway}/api/oidc/callback?code=stolen&state=forged")
    assert "failed (bad_state)" in _failure(page)
    page.get(f"{setup.gateway}/api/oidc/callback?error=access_denied&error_description=%3Cb%3Ex")
    assert "failed (provider_refused)" in _failure(page)
    assert _me(page)["player"] is None
