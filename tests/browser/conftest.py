"""The platform as a person meets it: `meldstream run --demo 1 --pace MS` in a subprocess (embedded store,
free ports), and Debian's chromium driven through its chromedriver by selenium (nothing downloads a
browser). Screenshots are kept in .local/test-artifacts/browser/ for a person to look at."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from meldstream_cli.platform_identity import ADMIN_VARIABLE, DEMO_PASSWORD_FILE
from rummy.identity.v1 import identity_pb2 as ipb
from rummy_client.identity import IdentityClient
from rummy_identity import credentials
from rummy_identity.testing import PASSWORD
from rummy_infra.local import free_port
from rummy_infra.serving import stop_process
from selenium import webdriver
from selenium.common.exceptions import ElementNotInteractableException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.select import Select
from selenium.webdriver.support.wait import WebDriverWait

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ARTIFACTS = Path(__file__).resolve().parents[2] / ".local" / "test-artifacts" / "browser"
WAIT_S = 60.0
DEMO_PREFIX = "demo-"  # the demo's accounts (meldstream_cli.platform_services)
BROWSER_LANGUAGE = "en-US"
GAME_S = 120.0  # the longest a page may wait for the game to move on (bots, a deal's end)


@dataclass
class Platform:
    url: str
    proc: subprocess.Popen[str]
    env: dict[str, str]  # the services' addresses, for the `meldstream` commands a test runs
    data: Path  # the embedded store
    lines: list[str] = field(default_factory=list)
    accounts: set[str] = field(default_factory=set)  # signed up by the tests so far

    @property
    def demo_password(self) -> str:
        """The demo accounts' password, which `meldstream run` keeps beside identity's files."""
        return (self.data.parent / "identity" / DEMO_PASSWORD_FILE).read_text().strip()

    def operator(self) -> str:
        """A session token of the run's operator account `ops`, made once with the run's admin
        credential (MELDSTREAM_ADMIN_CREDENTIAL) as `meldstream accounts create-operator` does."""
        if "ops" not in self.accounts:
            client = IdentityClient(self.identity)
            admin = client.api_token(self.env[ADMIN_VARIABLE])
            link = client.call("CreateOperator", ipb.CreateOperatorRequest(name="ops"), admin).link
            client.call(
                "ResetPassword", ipb.ResetPasswordRequest(reset_token=link.reset_token, new_password=PASSWORD)
            )
            client.close()
            self.accounts.add("ops")
        client = IdentityClient(self.identity)
        token = client.session_token(client.sign_in("ops", PASSWORD, device="tests"))()
        client.close()
        return token

    @property
    def identity(self) -> str:
        """The platform's identity service."""
        return self.env["IDENTITY_ADDRESS"]

    def wait_for_line(self, pattern: str, timeout_s: float = WAIT_S) -> re.Match[str]:
        """The first line of `meldstream run`'s output matching `pattern`, once it is printed."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if found := re.search(pattern, line):
                    return found
            if self.proc.poll() is not None:
                break  # it stopped: what it printed says why
            time.sleep(0.1)
        raise AssertionError(f"no line matching {pattern!r} in {timeout_s} s:\n{''.join(self.lines)}")


@pytest.fixture(scope="session")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    """The whole platform with one table of demo bots at 150 ms a move, and the web gateway."""
    with running_platform(tmp_path_factory) as running:
        yield running


@contextlib.contextmanager
def running_platform(
    tmp_path_factory: pytest.TempPathFactory, *, demo: int = 1, **settings: str
) -> Iterator[Platform]:
    """`meldstream run --demo N` (none at 0) with these environment `settings` over the tests' own."""
    data = tmp_path_factory.mktemp("web") / "store"
    env = {
        **os.environ,
        **settings,
        "ENGINE_ADDRESS": f"127.0.0.1:{free_port()}",
        "MATCHMAKING_ADDRESS": f"127.0.0.1:{free_port()}",
        "SCORING_ADDRESS": f"127.0.0.1:{free_port()}",
        "IDENTITY_ADDRESS": f"127.0.0.1:{free_port()}",
        "WEB_BOT_PACE_MS": "40",  # quick play's bots: fast, the test's clicks set the pace
        ADMIN_VARIABLE: credentials.service_credentials(["admin"])["admin"],  # so tests make an operator
    }
    web = f"127.0.0.1:{free_port()}"
    command = [sys.executable, "-m", "meldstream_cli.main", "run", "--data-dir", str(data), "--web", web]
    command += ["--demo", str(demo), "--pace", "150"] if demo else []
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    running = Platform(f"http://{web}", proc, env, data)
    out = proc.stdout
    assert out is not None
    reader = threading.Thread(target=lambda: running.lines.extend(iter(out.readline, "")), daemon=True)
    reader.start()
    try:
        running.wait_for_line(rf"meldstream web on http://{re.escape(web)}", timeout_s=90)
        yield running
    finally:
        stop_process(proc, signal.SIGINT, timeout_s=30)
        reader.join(10)
        out.close()


Chooser = Callable[[WebDriver, list["Move"]], "Move"]


def _chromium_missing() -> str:
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not shutil.which(path)]
    return (
        f"{' and '.join(missing)} not installed (make setup installs Debian's chromium and chromium-driver)"
    )


@pytest.fixture(scope="session")
def browser() -> Iterator[WebDriver]:
    """Headless chromium at phone-ish width; its console is read by the tests."""
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        if os.environ.get("CI"):
            pytest.fail(_chromium_missing())  # CI installs them: missing there is a broken setup
        pytest.skip(_chromium_missing())
    driver = open_chromium()
    try:
        yield driver
    finally:
        driver.quit()


def open_chromium() -> WebDriver:
    """A new headless chromium (its own profile: another person's browser); the caller quits it."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=800,1200"):
        options.add_argument(argument)
    # The tests read the page in English, whatever the machine's locale (the page follows the browser's).
    options.add_argument(f"--lang={BROWSER_LANGUAGE}")
    options.add_experimental_option("prefs", {"intl.accept_languages": BROWSER_LANGUAGE})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(0)
    return driver


def sign_in(browser: WebDriver, platform: Platform, name: str, display_name: str = "") -> None:
    """`name` signs in at the sign-in page, as a person does: a demo account (`demo-...`) with the
    demo's password, any other signed up the first time with the tests' password (and `display_name`)."""
    # Whoever signed in before: every cookie, the session's too (Path=/api, which WebDriver's
    # delete_all_cookies leaves, as it sees only the page's own path).
    browser.execute_cdp_cmd("Network.clearBrowserCookies", {})
    console_errors(browser)  # what earlier pages logged (another site's missing favicon) is theirs
    browser.get(platform.url)
    browser.execute_script("localStorage.clear()")
    browser.get(platform.url)
    until(browser, lambda d: d.find_element(By.ID, "signin-name").is_displayed())
    demo = name.startswith(DEMO_PREFIX)
    browser.find_element(By.ID, "signin-name").send_keys(name)
    browser.find_element(By.ID, "signin-password").send_keys(platform.demo_password if demo else PASSWORD)
    new = not demo and name not in platform.accounts
    if new and display_name:
        browser.find_element(By.ID, "signup-display").send_keys(display_name)
    browser.find_element(By.ID, "signup-btn" if new else "signin-btn").click()
    until(browser, lambda d: d.find_element(By.ID, "lobby-page").is_displayed())
    platform.accounts.add(name)


def until(browser: WebDriver, condition: Callable[[WebDriver], object], timeout_s: float = WAIT_S) -> object:
    """`condition`'s first truthy answer; an element it found redrawn meanwhile (the page draws each
    update anew) or not yet shown (a page being switched to) is looked for again."""
    ignored = (StaleElementReferenceException, ElementNotInteractableException)
    waiting = WebDriverWait(browser, timeout_s, poll_frequency=0.05, ignored_exceptions=ignored)
    return waiting.until(condition)


def click(browser: WebDriver, element_id: str) -> None:
    """Click the element with this id, looked for again if the page redrew it meanwhile."""

    def clicked(driver: WebDriver) -> bool:
        driver.find_element(By.ID, element_id).click()
        return True

    until(browser, clicked)


def screenshot(browser: WebDriver, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    browser.save_screenshot(str(path))
    return path


def story(browser: WebDriver, platform: Platform) -> str:
    """What a failed play test needs to be understood later: the page's move log (newest first, moves
    the engine played for a seat marked), its message, its console, and the platform's last lines."""
    log = browser.execute_script("return document.getElementById('log')?.innerText") or ""
    message = browser.find_element(By.ID, "message").text
    console = browser.execute("getLog", {"type": "browser"})["value"]
    return (
        f"page log:\n{log}\nmessage: {message}\nconsole: {console}\n"
        f"platform's last lines:\n{''.join(platform.lines[-40:])}"
    )


def console_errors(browser: WebDriver) -> list[str]:
    """What the page logged at error level (an uncaught exception, a failed request) since last asked."""
    entries = browser.execute("getLog", {"type": "browser"})["value"]  # WebDriver.get_log, typed
    return [str(entry["message"]) for entry in entries if entry["level"] == "SEVERE"]


@dataclass(frozen=True, slots=True)
class Move:
    """A move button of the page's full list of moves (one of the engine's legal actions each)."""

    element: WebElement
    kind: str  # the Action's kind, e.g. "draw_from_stock"
    index: int | None  # a Rummy 500 pick's pile position


@dataclass(frozen=True, slots=True)
class Page:
    over: bool  # the game-over result is shown
    moves: list[Move]


# The page's state in one WebDriver round trip (on a busy machine each round trip counts).
_PAGE = """
const result = document.getElementById("result");
const list = document.getElementById("moves-box");  // the full list of moves, folded under the card table
if (list && !list.open) list.open = true;
const moves = [...document.querySelectorAll("#moves button.move")];
return [!result.hidden && result.textContent.includes("Game over"),
  moves.map((b) => [b, b.dataset.kind, b.dataset.index ?? null])];
"""
_ANSWERED = """
return !arguments[0].isConnected || document.getElementById("message").textContent.includes("Refused");
"""


def page(browser: WebDriver) -> Page:
    over, moves = browser.execute_script(_PAGE)
    return Page(bool(over), [Move(m[0], str(m[1]), None if m[2] is None else int(m[2])) for m in moves])


def game_over(browser: WebDriver) -> bool:
    return page(browser).over


def start_quick_play(browser: WebDriver, variant: str, players: int, length: str = "full") -> None:
    """From the lobby: a table of the signed-in player and bots; returns once the hand is dealt."""
    Select(browser.find_element(By.ID, "variant")).select_by_value(variant)
    Select(browser.find_element(By.ID, "players")).select_by_value(str(players))
    Select(browser.find_element(By.ID, "length")).select_by_value(length)
    browser.find_element(By.ID, "quickplay").click()
    until(browser, lambda d: d.find_element(By.ID, "table-page").is_displayed())
    until(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#hand .card"))


def play(browser: WebDriver, choose: Chooser, *, moves: int | None = None, lost_race: str = "") -> int:
    """Click offered moves, as `choose` picks them, until the game is over (or `moves` were made);
    returns the moves made. Each click waits for the page to be redrawn (the engine took the move)
    and no move may be refused (the page offers only legal ones) but a race lost to a bot that the
    rules settle first come, first served (`lost_race`, a pattern of the refusal)."""
    clicks = 0
    while moves is None or clicks < moves:
        now = page(browser)
        if now.over:
            break
        if not now.moves:
            until(browser, lambda d: (shown := page(d)).over or shown.moves, timeout_s=GAME_S)
            continue
        try:
            move = choose(browser, now.moves)
            move.element.click()
            until(browser, functools.partial(_answered, move.element), timeout_s=GAME_S)
        except StaleElementReferenceException:
            continue  # redrawn before the click landed (a bot moved): look again
        clicks += 1
        message = browser.find_element(By.ID, "message").text
        assert "Refused" not in message or (lost_race and re.search(lost_race, message)), message
    return clicks


def _answered(element: WebElement, browser: WebDriver) -> bool:
    """The page was redrawn after a click (the engine took the move), or shows a refusal."""
    try:
        return bool(browser.execute_script(_ANSWERED, element))
    except StaleElementReferenceException:
        return True
