"""Quick-play bots outlive the gateway replica that seated them: two real `python -m meldstream_web`
processes sharing a Redis, one engine process. A person starts a game against a bot at replica a and
plays there; a is killed (SIGKILL: nothing handed over); within a lease the other replica takes the
game's bot over (bot_runner.py), the person's stream reconnects at b after its Last-Event-ID, the game
goes on and ends, and the engine's turn timer never had to play the bot's seat."""

from __future__ import annotations

import http.cookiejar
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from rummy_identity.testing import PASSWORD, IdentityProcess
from rummy_infra.local import free_port
from rummy_infra.serving import ServiceProcess, stop_process
from rummy_service.config import SERVICE_CREDENTIAL_VARIABLE

pytestmark = pytest.mark.integration


class Replica:
    """One gateway process, as the image runs it (production mode), until killed."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = log
        with log.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "meldstream_web"],
                env={**env, "WEB_ADDRESS": f"127.0.0.1:{self.port}"},
                stdout=out,
                stderr=out,
            )
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(self.url + "/readyz", timeout=1):
                    return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(
                        f"the gateway did not get ready:\n{log.read_text()[-3000:]}"
                    ) from None
                time.sleep(0.1)

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        stop_process(self.proc)


def server_sent(stream: Iterable[bytes]) -> Iterator[tuple[str | None, str]]:
    """The (event, data) of each server-sent event on `stream`; heartbeat comments skipped."""
    event: dict[str, str] = {}
    for raw in stream:
        line = raw.decode().rstrip("\n")
        if line.startswith(":"):
            continue  # a heartbeat
        if line:
            key, _, value = line.partition(": ")
            event[key] = value
            continue
        yield event.get("event"), event.get("data", "{}")
        event = {}


class Person:
    """A browser: one cookie jar for both replicas; plays seat 0 neutrally (draw, then discard)."""

    def __init__(self) -> None:
        self.jar = http.cookiejar.CookieJar()

    def _open(self, request: urllib.request.Request, timeout: float = 10) -> Any:
        return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar)).open(
            request, timeout=timeout
        )

    def call(self, url: str, method: str = "GET", body: object = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method)
        if method != "GET":
            csrf = next((c.value or "" for c in self.jar if c.name == "ms_csrf"), "")
            request.add_header("X-CSRF-Token", csrf)
        try:
            with self._open(request) as reply:
                return reply.status, json.loads(reply.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def play(
        self, base: str, game: str, *, after: int = 0, moves: int | None = None
    ) -> list[tuple[int, Any]]:
        """Follow the game's stream at `base` (after `after`), moving seat 0 whenever it may, until
        `moves` moves were made (then the stream is dropped) or the stream ends. The updates seen."""
        request = urllib.request.Request(f"{base}/api/games/{game}/updates?seat=0")
        if after:
            request.add_header("Last-Event-ID", str(after))
        seen: list[tuple[int, Any]] = []
        made, acted = 0, -1
        with self._open(request, timeout=60) as stream:
            for kind, data in server_sent(stream):
                if kind == "end":
                    return seen
                if kind == "failure":
                    raise AssertionError(f"the stream failed: {data}")
                if kind != "update":
                    continue
                update = json.loads(data)
                seq = int(update["seq"])
                seen.append((seq, update))
                actions = update.get("legal_actions") or []
                if update["view"].get("turn", 0) != 0 or not actions or seq <= acted:
                    continue
                chosen = next(
                    (a for kind_ in ("draw_from_stock", "discard") for a in actions if kind_ in a), actions[0]
                )
                status, answer = self.call(
                    f"{base}/api/games/{game}/actions", "POST", {"seat": 0, "action": chosen}
                )
                assert status in (200, 409), answer  # 409: the game moved on meanwhile
                acted, made = seq, made + 1
                if moves is not None and made >= moves:
                    return seen
        return seen


@pytest.fixture
def replicas(
    identity: IdentityProcess,
    embedded_engine: ServiceProcess,
    redis_url: str,
    unique_prefix: str,
    tmp_path: Path,
) -> Iterator[tuple[Replica, Replica]]:
    nowhere = f"127.0.0.1:{free_port()}"
    env = {
        **os.environ,
        "ENGINE_ADDRESS": embedded_engine.address,
        "IDENTITY_ADDRESS": identity.address,
        "MATCHMAKING_ADDRESS": nowhere,
        "SCORING_ADDRESS": nowhere,
        SERVICE_CREDENTIAL_VARIABLE: identity.service_env("web")[SERVICE_CREDENTIAL_VARIABLE],
        "REDIS_URL": redis_url,
        "WEB_KEY_PREFIX": f"{unique_prefix}:",
        "WEB_COOKIE_SECURE": "0",  # plain http to 127.0.0.1
        "WEB_BOT_PACE_MS": "50",
    }
    env.pop("MELDSTREAM_DEV", None)
    started: list[Replica] = []
    try:
        for name in ("a", "b"):
            started.append(Replica(env, tmp_path / f"web-{name}.log"))
        yield started[0], started[1]
    finally:
        for replica in started:
            replica.stop()


def test_a_killed_replica_loses_no_bot_and_its_player_reconnects_at_the_other(
    replicas: tuple[Replica, Replica], redis_url: str, unique_prefix: str
) -> None:
    a, b = replicas
    zoe = Person()
    zoe.call(f"{a.url}/api/variants")  # the page's CSRF cookie
    account = {"name": f"takeover-{os.getpid()}-{free_port()}", "password": PASSWORD, "display_name": "Zoe"}
    assert zoe.call(f"{a.url}/api/signup", "POST", account)[0] == 200
    status, table = zoe.call(
        f"{a.url}/api/quickplay", "POST", {"variant": "rummy40", "players": 2, "length": "short"}
    )
    assert status == 200, table
    game = table["game_id"]
    before = zoe.play(
        a.url, game, moves=3
    )  # the bot runs at a, where the game was made (3: it moved between)
    assert any(update.get("actor") == 1 for _, update in before), "the bot never moved at a"
    a.kill()
    killed_at = time.monotonic()
    after = zoe.play(b.url, game, after=before[-1][0])
    took = time.monotonic() - killed_at
    assert after, "nothing after the reconnect"
    assert after[0][0] == before[-1][0] + 1  # resumed right after the last update she had
    final = after[-1][1]
    assert final["view"]["phase"] == "PHASE_GAME_OVER", final["view"]
    bot_moves = [update for _, update in after if update.get("actor") == 1]
    assert bot_moves, "the bot never moved after a was killed"
    timed_out = [
        update["event_type"] for _, update in before + after if "timed_out" in update.get("event_type", "")
    ]
    assert timed_out == [], f"the turn timer played for someone: {timed_out}"
    assert took < 120
    # Played to its end, the game leaves the replicas' list of games with bots.
    games = redis.Redis.from_url(redis_url)
    deadline = time.monotonic() + 10
    while games.hlen(f"{unique_prefix}:web:bots") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert games.hlen(f"{unique_prefix}:web:bots") == 0
    games.close()


def test_a_pass_sent_through_another_replica_releases_the_bot_holding_the_card(
    replicas: tuple[Replica, Replica],
) -> None:
    """Contract rummy, a person and two bots run at replica a: when the person may buy the card on offer,
    the forehand bot holds it for them (up to 10 s); their pass, sent through b, reaches the bot at a
    through Redis, and it draws at once."""
    a, b = replicas
    zoe = Person()
    zoe.call(f"{b.url}/api/variants")
    account = {"name": f"passer-{os.getpid()}-{free_port()}", "password": PASSWORD, "display_name": "Zoe"}
    assert zoe.call(f"{b.url}/api/signup", "POST", account)[0] == 200
    body = {"variant": "contract", "players": 3, "length": "short"}
    status, table = zoe.call(f"{a.url}/api/quickplay", "POST", body)
    assert status == 200, table
    game = table["game_id"]
    request = urllib.request.Request(f"{b.url}/api/games/{game}/updates?seat=0")
    passed_at, forehand, acted = 0.0, -1, -1
    with zoe._open(request, timeout=60) as stream:
        for kind, data in server_sent(stream):
            assert kind not in ("end", "failure"), f"the stream ended first: {kind} {data}"
            if kind != "update":
                continue
            update = json.loads(data)
            seq, view = int(update["seq"]), update["view"]
            if passed_at and update.get("actor") == forehand:
                waited = time.monotonic() - passed_at
                break
            actions = update.get("legal_actions") or []
            if not actions or seq <= acted:
                continue
            passes = [action for action in actions if "pass_buy" in action]
            if passes and view.get("turn") != 0:
                if passed_at:
                    continue  # an update from before the pass took effect: passed once is final (D27)
                status, answer = zoe.call(
                    f"{b.url}/api/games/{game}/actions", "POST", {"seat": 0, "action": passes[0]}
                )
                assert status == 200, answer
                passed_at, forehand, acted = time.monotonic(), view["turn"], seq
                continue
            if view.get("turn") == 0:
                chosen = next(
                    (x for k in ("draw_from_stock", "discard") for x in actions if k in x), actions[0]
                )
                status, answer = zoe.call(
                    f"{b.url}/api/games/{game}/actions", "POST", {"seat": 0, "action": chosen}
                )
                assert status in (200, 409), answer
                acted = seq
    assert waited < 5, f"the bot held the card {waited:.1f} s after the pass (its hold is 10 s)"
