"""The web table's budgets (issue 26), measured as a person meets them: `meldstream run` on the embedded
store (what `make run` starts, on free ports and a throwaway data directory) and Debian's headless
chromium driven by selenium, the way tests/browser does.

It prints, each beside its budget and beside a floor measured in the same run (this box is shared, so
read a figure against its floor):
- cold loads of the page (browser cache off): first paint and first contentful paint (the Performance
  API's paint entries), DOMContentLoaded and load; floor: a bare static file from the same server;
- the page's weight at load: bytes transferred and uncompressed, per request and in all;
- click to updated table over N moves of a quick-play game against bots: from the click event (its
  timeStamp) to the DOM mutation that shows the server's answer (the hand redrawn), and to the next
  animation frame after it; floors: a click the page answers alone (selecting a card) and a bare
  fetch round trip to the server from the page.

Budgets: first paint median under 1 s, click to updated table median under 50 ms. Exit status 1 when
a budget is missed, 2 when the run could not measure."""

from __future__ import annotations

import argparse
import http.server
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rummy_infra.local import free_port
from rummy_infra.serving import stop_process
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.select import Select
from selenium.webdriver.support.wait import WebDriverWait

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FIRST_PAINT_BUDGET_MS = 1000.0
CLICK_BUDGET_MS = 50.0
BARE_STATIC = "/static/chat-reports.html"  # the gateway's smallest static page
BARE_PAGE = b"<!doctype html><title>bare</title><p>A bare page: the browser's floor.</p>"
START_S = 120.0
WAIT_S = 60.0

# Paint and navigation entries of the page as loaded, and every resource it fetched so far.
_LOAD = """
const paint = Object.fromEntries(performance.getEntriesByType("paint").map((e) => [e.name, e.startTime]));
const nav = performance.getEntriesByType("navigation")[0];
const res = (e) => ({name: e.name, type: e.initiatorType, transfer: e.transferSize,
  decoded: e.decodedBodySize});
return {paint, dcl: nav.domContentLoadedEventEnd, load: nav.loadEventEnd,
  resources: [res(nav), ...performance.getEntriesByType("resource").map(res)]};
"""

# Records each click on a move of the full list or a hand card: its event time, then the first DOM
# mutation after it that changed the hand (the server's answer to a move; the selection, for a card),
# and the animation frame after that mutation (the browser about to paint it).
_RECORDER = """
if (window.__bench) return;
const keys = (s) => [...document.querySelectorAll(s)].map((c) => c.dataset.card).join(" ");
const hand = () => keys("#hand .card");
const picked = () => keys("#hand .card.selected");
window.__bench = [];
performance.setResourceTimingBufferSize(100000);  // the moves' POSTs, past the default 250 entries
document.addEventListener("click", (e) => {
  const move = e.target.closest && e.target.closest("#moves button.move");
  const card = e.target.closest && e.target.closest("#hand .card");
  if (!move && !card) return;
  const look = move ? hand : picked;
  window.__bench.push({kind: move ? "move" : "card", look, before: look(), t0: e.timeStamp,
    handled: performance.now(), mutated: null, frame: null});
}, true);
new MutationObserver(() => {
  const now = performance.now();
  for (const r of window.__bench) {
    if (r.mutated !== null || r.look() === r.before) continue;
    r.mutated = now;
    requestAnimationFrame(() => { r.frame = performance.now(); });
  }
}).observe(document.body, {childList: true, subtree: true, attributes: true, characterData: true});
"""
_LAST = """
const r = window.__bench[window.__bench.length - 1];
const refused = document.getElementById("message").textContent.includes("Refused");
const post = r && performance.getEntriesByType("resource")
  .find((e) => e.name.includes("/actions") && e.startTime >= r.t0);
return r ? {n: window.__bench.length, kind: r.kind, input: r.handled - r.t0,
  mutated: r.mutated === null ? null : r.mutated - r.t0,
  frame: r.frame === null ? null : r.frame - r.t0, post: post ? post.responseEnd - r.t0 : null, refused}
  : {n: 0, refused};
"""
_ROUND_TRIPS = """
const done = arguments[arguments.length - 1];
(async () => {
  const times = [];
  for (let i = 0; i < arguments[0]; i++) {
    const t0 = performance.now();
    await (await fetch("/healthz", {cache: "no-store"})).text();
    times.push(performance.now() - t0);
  }
  return times;
})().then(done, (e) => done(String(e)));
"""
# The page's state: over, and the full list of moves (opened, as conftest's play does).
_MOVES = """
const result = document.getElementById("result");
const box = document.getElementById("moves-box");
if (box && !box.open) box.open = true;
return [!!result && !result.hidden && result.textContent.includes("Game over"),
  [...document.querySelectorAll("#moves button.move")].map((b) => [b, b.dataset.kind])];
"""


class _Bare(http.server.BaseHTTPRequestHandler):
    """Serves BARE_PAGE at any path: a page load with no server work and nothing else to fetch."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(BARE_PAGE)))
        self.end_headers()
        self.wfile.write(BARE_PAGE)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the bench prints its figures only."""


@dataclass
class Platform:
    url: str
    proc: subprocess.Popen[str]
    lines: list[str]

    def stop(self) -> None:
        stop_process(self.proc, signal.SIGINT, timeout_s=30)


def start_platform(data: Path) -> Platform:
    """`meldstream run` as `make run` starts it (embedded store), on free ports and a fresh data dir."""
    env = {
        **os.environ,
        "ENGINE_ADDRESS": f"127.0.0.1:{free_port()}",
        "MATCHMAKING_ADDRESS": f"127.0.0.1:{free_port()}",
        "SCORING_ADDRESS": f"127.0.0.1:{free_port()}",
        "IDENTITY_ADDRESS": f"127.0.0.1:{free_port()}",
    }
    web = f"127.0.0.1:{free_port()}"
    command = [sys.executable, "-m", "meldstream_cli.main", "run", "--data-dir", str(data), "--web", web]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    out = proc.stdout
    assert out is not None
    threading.Thread(target=lambda: lines.extend(iter(out.readline, "")), daemon=True).start()
    ready = re.compile(rf"meldstream web on http://{re.escape(web)}")
    deadline = time.monotonic() + START_S
    while not any(ready.search(line) for line in list(lines)):
        if proc.poll() is not None or time.monotonic() > deadline:
            stop_process(proc, signal.SIGINT)
            raise SystemExit(f"bench-web: `meldstream run` did not start:\n{''.join(lines[-30:])}")
        time.sleep(0.1)
    return Platform(f"http://{web}", proc, lines)


def open_chromium(width: int, height: int) -> WebDriver:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        f"--window-size={width},{height}",
    ):
        options.add_argument(argument)
    options.add_argument("--lang=en-US")
    options.add_experimental_option("prefs", {"intl.accept_languages": "en-US"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(0)
    return driver


def until(driver: WebDriver, condition: Callable[[WebDriver], object], timeout_s: float = WAIT_S) -> Any:
    ignored = (StaleElementReferenceException,)
    return WebDriverWait(driver, timeout_s, poll_frequency=0.02, ignored_exceptions=ignored).until(condition)


@dataclass(frozen=True)
class Load:
    first_paint: float
    first_contentful_paint: float
    dom_content_loaded: float
    load: float
    resources: list[dict[str, Any]]


def cold_load(driver: WebDriver, url: str, ready: Callable[[WebDriver], object]) -> Load:
    """One load of `url` with the browser's cache off, once `ready` holds and the load event has ended."""
    driver.get("about:blank")
    driver.get(url)
    until(driver, ready)
    until(
        driver,
        lambda d: d.execute_script("return performance.getEntriesByType('navigation')[0].loadEventEnd > 0"),
    )
    time.sleep(0.3)  # what the page fetches right after its load event (its language's words) counts too
    got: dict[str, Any] = driver.execute_script(_LOAD)
    paint = got["paint"]
    return Load(
        float(paint.get("first-paint", float("nan"))),
        float(paint.get("first-contentful-paint", float("nan"))),
        float(got["dcl"]),
        float(got["load"]),
        list(got["resources"]),
    )


def signin_shown(driver: WebDriver) -> bool:
    return bool(driver.find_element(By.ID, "signin-page").is_displayed())


@dataclass(frozen=True)
class Clicks:
    input: list[float] = field(default_factory=list)  # click -> its listener running (input delay), ms
    mutated: list[float] = field(default_factory=list)  # click -> the DOM mutation showing the answer, ms
    frame: list[float] = field(default_factory=list)  # click -> the animation frame after it, ms
    post: list[float] = field(default_factory=list)  # click -> the move's POST answered (moves only), ms

    def add(self, last: dict[str, Any]) -> None:
        self.input.append(float(last["input"]))
        self.mutated.append(float(last["mutated"]))
        self.frame.append(float(last["frame"]))
        if last["post"] is not None:
            self.post.append(float(last["post"]))


def play_moves(driver: WebDriver, url: str, moves: int, variant: str) -> Clicks:
    """Sign in as a guest, start quick play against a bot, and click `moves` moves of the full list
    (draw from the stock first, else discard, else the first offered), each measured in the page."""
    driver.get(url)
    until(driver, signin_shown)
    driver.find_element(By.ID, "guest-btn").click()
    until(driver, lambda d: d.find_element(By.ID, "lobby-page").is_displayed())
    clicks = Clicks()
    while len(clicks.mutated) < moves:
        start_quick_play(driver, variant)
        driver.execute_script(_RECORDER)
        while len(clicks.mutated) < moves:
            over, offered = driver.execute_script(_MOVES)
            if over:
                break
            if not offered:
                time.sleep(0.02)
                continue
            kinds = [kind for _, kind in offered]
            pick = next((k for k in ("draw_from_stock", "discard") if k in kinds), kinds[0])
            element = [e for e, kind in offered if kind == pick][-1 if pick == "discard" else 0]
            before = driver.execute_script(_LAST)["n"]
            try:
                element.click()
            except (StaleElementReferenceException, WebDriverException):
                continue  # redrawn under the click (a bot moved): look again
            if driver.execute_script(_LAST)["n"] == before:
                continue  # the click did not land on a move
            until(driver, lambda d: (r := d.execute_script(_LAST))["frame"] is not None or r["refused"])
            last = driver.execute_script(_LAST)
            if last["frame"] is None:
                raise SystemExit(
                    f"bench-web: a move was refused: {driver.find_element(By.ID, 'message').text}"
                )
            clicks.add(last)
    return clicks


def start_quick_play(driver: WebDriver, variant: str) -> None:
    if not driver.find_element(By.ID, "lobby-page").is_displayed():  # a game over: back to the lobby
        driver.execute_script("location.hash = '#/lobby'")
        until(driver, lambda d: d.find_element(By.ID, "lobby-page").is_displayed())
    Select(driver.find_element(By.ID, "variant")).select_by_value(variant)
    Select(driver.find_element(By.ID, "players")).select_by_value("2")
    driver.find_element(By.ID, "quickplay").click()
    until(driver, lambda d: d.find_element(By.ID, "table-page").is_displayed())
    until(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#hand .card"))


def select_cards(driver: WebDriver, count: int) -> Clicks:
    """The floor of a click: a hand card selected and unselected, answered by the page alone."""
    clicks = Clicks()
    while len(clicks.mutated) < count:
        cards = driver.find_elements(By.CSS_SELECTOR, "#hand .card")
        if not cards:
            break
        before = driver.execute_script(_LAST)["n"]
        try:
            cards[len(clicks.mutated) % min(len(cards), 4)].click()
        except (StaleElementReferenceException, WebDriverException):
            continue
        if driver.execute_script(_LAST)["n"] == before:
            continue
        try:
            until(driver, lambda d: d.execute_script(_LAST)["frame"] is not None, timeout_s=5)
        except WebDriverException:
            continue  # the hand was redrawn by a move and the selection with it: not this click's answer
        clicks.add(driver.execute_script(_LAST))
    return clicks


def quantiles(values: Sequence[float]) -> tuple[float, float, float]:
    """Median, p90 and max."""
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return statistics.median(ordered), p90, ordered[-1]


def row(label: str, values: Sequence[float], budget: float | None = None) -> str:
    median, p90, most = quantiles(values)
    verdict = (
        ""
        if budget is None
        else f"  budget median < {budget:.0f} ms: {'PASS' if median < budget else 'FAIL'}"
    )
    return (
        f"  {label:<48} median {median:7.1f}  p90 {p90:7.1f}  max {most:7.1f} ms (n={len(values)}){verdict}"
    )


def weight(resources: list[dict[str, Any]]) -> list[str]:
    lines = []
    for r in sorted(resources, key=lambda r: -int(r["decoded"])):
        path = re.sub(r"^https?://[^/]+", "", str(r["name"]))
        lines.append(
            f"    {int(r['transfer']):>8,} B sent  {int(r['decoded']):>8,} B uncompressed"
            f"  {r['type']:<10} {path}"
        )
    transferred = sum(int(r["transfer"]) for r in resources)
    decoded = sum(int(r["decoded"]) for r in resources)
    lines.append(f"    {transferred:>8,} B sent  {decoded:>8,} B uncompressed  in {len(resources)} requests")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--loads", type=int, default=10, help="cold page loads (default 10)")
    parser.add_argument(
        "--moves", type=int, default=40, help="moves clicked in games against a bot (default 40)"
    )
    parser.add_argument("--variant", default="kalooki", help="the variant played (default kalooki)")
    args = parser.parse_args(argv)
    for tool in (CHROMIUM, CHROMEDRIVER):
        if not shutil.which(tool):
            print(f"bench-web: {tool} missing (`make infra` installs Debian's chromium and chromium-driver)")
            return 2
    bare_server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Bare)
    threading.Thread(target=bare_server.serve_forever, daemon=True).start()
    bare_url = f"http://127.0.0.1:{bare_server.server_address[1]}/"
    with tempfile.TemporaryDirectory(prefix="bench-web-") as tmp:
        started = time.monotonic()
        platform = start_platform(Path(tmp) / "store")
        ready_s = time.monotonic() - started
        print(f"bench-web: `meldstream run` (embedded store) ready in {ready_s:.1f} s at {platform.url}")
        driver = open_chromium(1280, 900)
        try:
            driver.execute_cdp_cmd("Network.enable", {})
            driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
            cold_load(driver, platform.url, signin_shown)  # the first load warms the server: not counted
            loads = [cold_load(driver, platform.url, signin_shown) for _ in range(args.loads)]
            bare = [cold_load(driver, bare_url, _complete) for _ in range(args.loads)]
            static = [cold_load(driver, platform.url + BARE_STATIC, _complete) for _ in range(args.loads)]
            driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": False})
            clicks = play_moves(driver, platform.url, args.moves, args.variant)
            selecting = select_cards(driver, min(args.moves, 20))
            trips = driver.execute_async_script(_ROUND_TRIPS, args.moves)
        finally:
            driver.quit()
            platform.stop()
            bare_server.shutdown()
    if not isinstance(trips, list):
        print(f"bench-web: the page's fetch failed: {trips}")
        return 2
    first_paint = [load.first_paint for load in loads]
    print(f"\nCold loads of the page (cache off; {args.loads} loads after one not counted):")
    print(row("first paint", first_paint, FIRST_PAINT_BUDGET_MS))
    print(row("first contentful paint", [load.first_contentful_paint for load in loads]))
    print(row("DOMContentLoaded", [load.dom_content_loaded for load in loads]))
    print(row("load", [load.load for load in loads]))
    print(row("floor: first paint, a bare page (the bench's server)", [load.first_paint for load in bare]))
    print(row("floor: load, a bare page", [load.load for load in bare]))
    print(row(f"floor: first paint, {BARE_STATIC}", [load.first_paint for load in static]))
    print("\nPage weight at load (the last cold load; the gateway serves no compression):")
    print("\n".join(weight(loads[-1].resources)))
    print(
        f"\nClick to updated table: {len(clicks.mutated)} moves of {args.variant} against a bot,"
        " from the click event"
    )
    print(row("to the DOM mutation showing the answer", clicks.mutated, CLICK_BUDGET_MS))
    print(row("to the next animation frame", clicks.frame))
    print(row("of which the click's input delay", clicks.input))
    print(row("the move's POST answered (the view comes by the stream)", clicks.post))
    print(row("floor: a card selected (the page alone)", selecting.mutated))
    print(row("floor: fetch /healthz from the page", [float(t) for t in trips]))
    failed = statistics.median(first_paint) >= FIRST_PAINT_BUDGET_MS
    failed = failed or statistics.median(clicks.mutated) >= CLICK_BUDGET_MS
    print(f"\nbench-web: {'FAIL' if failed else 'PASS'}")
    return 1 if failed else 0


def _complete(driver: WebDriver) -> bool:
    return bool(driver.execute_script("return document.readyState") == "complete")


if __name__ == "__main__":
    sys.exit(main())
