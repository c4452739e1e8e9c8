"""The platform as a person meets it: `meldstream run --demo 1 --pace MS` in a subprocess (embedded store,
free ports), and Debian's chromium driven through its chromedriver by selenium (nothing downloads a
browser). Screenshots are kept in .local/test-artifacts/browser/ for a person to look at."""

from __future__ import annotations

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
from rummy_infra.local import free_port
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.wait import WebDriverWait

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ARTIFACTS = Path(__file__).resolve().parents[2] / ".local" / "test-artifacts" / "browser"
WAIT_S = 60.0


@dataclass
class Platform:
    url: str
    proc: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)

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
    data = tmp_path_factory.mktemp("web") / "store"
    env = {
        **os.environ,
        "ENGINE_ADDRESS": f"127.0.0.1:{free_port()}",
        "MATCHMAKING_ADDRESS": f"127.0.0.1:{free_port()}",
        "SCORING_ADDRESS": f"127.0.0.1:{free_port()}",
        "WEB_BOT_PACE_MS": "40",  # quick play's bots: fast, the test's clicks set the pace
    }
    web = f"127.0.0.1:{free_port()}"
    command = [sys.executable, "-m", "meldstream_cli.main", "run", "--demo", "1", "--pace", "150"]
    command += ["--data-dir", str(data), "--web", web]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    running = Platform(f"http://{web}", proc)
    out = proc.stdout
    assert out is not None
    reader = threading.Thread(target=lambda: running.lines.extend(iter(out.readline, "")), daemon=True)
    reader.start()
    try:
        running.wait_for_line(rf"meldstream web on http://{re.escape(web)}", timeout_s=90)
        yield running
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        reader.join(10)
        out.close()


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
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=800,1200"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(0)
    try:
        yield driver
    finally:
        driver.quit()


def sign_in(browser: WebDriver, platform: Platform, name: str) -> None:
    browser.get(platform.url)
    browser.execute_script("localStorage.clear()")
    browser.get(platform.url)
    until(browser, lambda d: d.find_element(By.ID, "signin-name").is_displayed())
    browser.find_element(By.ID, "signin-name").send_keys(name)
    browser.find_element(By.ID, "signin-btn").click()
    until(browser, lambda d: d.find_element(By.ID, "lobby-page").is_displayed())


def until(browser: WebDriver, condition: Callable[[WebDriver], object], timeout_s: float = WAIT_S) -> object:
    return WebDriverWait(browser, timeout_s, poll_frequency=0.05).until(condition)


def screenshot(browser: WebDriver, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    browser.save_screenshot(str(path))
    return path


def console_errors(browser: WebDriver) -> list[str]:
    """What the page logged at error level (an uncaught exception, a failed request) since last asked."""
    entries = browser.execute("getLog", {"type": "browser"})["value"]  # WebDriver.get_log, typed
    return [str(entry["message"]) for entry in entries if entry["level"] == "SEVERE"]
