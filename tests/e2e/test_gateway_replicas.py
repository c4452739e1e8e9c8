"""Two replicas of the web gateway in front of one engine, as deploy/compose.yaml and deploy/k8s run them
behind one port with no sticky sessions: a browser signed in at one is served by the other (its session
is in its cookies, its CSRF token too), a table created at one is played from the other, and an event
stream broken off at one resumes at the other after its Last-Event-ID, with nothing repeated.

Behind a TLS-terminating proxy the gateway sees plain http: it takes the page's scheme from the
proxy's X-Forwarded-Proto (uvicorn believes it from FORWARDED_ALLOW_IPS, 127.0.0.1 by default, the
address this test calls from), and without it a page served over https is refused as another site's.

No Kafka or Redis: the engine runs on its embedded store, identity is the session's.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from meldstream_web.config import WebConfig
from meldstream_web.server import RunningGateway, start_gateway
from rummy_engine.config import EngineConfig
from rummy_engine.engine import start_engine
from rummy_identity.testing import PASSWORD, IdentityProcess
from rummy_infra.local import free_port
from rummy_service.config import SERVICE_CREDENTIAL_VARIABLE

SITE = "games.example.com"  # the public name a proxy would serve


@dataclass
class Browser:
    """One browser at one site: one cookie jar, whichever replica answers (all are 127.0.0.1)."""

    jar: http.cookiejar.CookieJar = field(default_factory=http.cookiejar.CookieJar)

    def _open(self, request: urllib.request.Request, timeout: float = 10) -> Any:
        return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar)).open(
            request, timeout=timeout
        )

    def csrf(self) -> str:
        return next((c.value or "" for c in self.jar if c.name == "ms_csrf"), "")

    def call(
        self, url: str, method: str = "GET", body: object = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
        if method != "GET":
            request.add_header("X-CSRF-Token", self.csrf())
        try:
            with self._open(request) as reply:
                return reply.status, json.loads(reply.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def updates(self, url: str, *, last_event_id: str = "", until_turn: int | None = None) -> list[Any]:
        """A game's event stream, read until an update gives seat `until_turn` its legal actions (or,
        with None, the first update), then dropped as a lost connection would drop it."""
        request = urllib.request.Request(url, headers={"Accept": "text/event-stream"})
        if last_event_id:
            request.add_header("Last-Event-ID", last_event_id)
        seen: list[Any] = []
        event: dict[str, str] = {}
        with self._open(request, timeout=30) as stream:
            for raw in stream:
                line = raw.decode().rstrip("\n")
                if line:
                    key, _, value = line.partition(": ")
                    event[key] = value
                    continue
                if event.get("event") == "update":
                    update = json.loads(event["data"])
                    seen.append((int(event["id"]), update))
                    if until_turn is None or (
                        update["view"]["turn"] == until_turn and update["legal_actions"]
                    ):
                        return seen
                elif event.get("event") in ("failure", "end"):
                    raise AssertionError(f"the stream ended: {event}")
                event = {}
        raise AssertionError("the stream closed")


async def _gateways(identity: IdentityProcess, engine: str) -> list[RunningGateway]:
    config = WebConfig(
        engine=engine,
        identity=identity.address,
        service_credential=identity.service_env("web")[SERVICE_CREDENTIAL_VARIABLE],
        bot_pace_ms=0,
        cookie_secure=False,  # plain http to 127.0.0.1: the jar keeps no Secure cookie
    )
    started: list[RunningGateway] = []
    for _ in range(2):
        started.append(await start_gateway(replace(config, address=f"127.0.0.1:{free_port()}")))
    return started


def test_any_replica_serves_any_player_and_a_stream_resumes_on_another(
    identity: IdentityProcess, tmp_path: Path
) -> None:
    async def scenario() -> dict[str, Any]:
        engine = await start_engine(
            EngineConfig(address="127.0.0.1:0", data_dir=str(tmp_path / "engine"), identity=identity.address)
        )
        replicas = await _gateways(identity, engine.address)
        a, b = (gateway.url for gateway in replicas)
        zoe = Browser()
        out: dict[str, Any] = {}
        try:
            await asyncio.to_thread(zoe.call, f"{a}/api/variants")  # the page's CSRF cookie, from a
            account = {"name": "replica-zoe", "password": PASSWORD, "display_name": "Zoe"}
            out["signed_up"] = await asyncio.to_thread(zoe.call, f"{a}/api/signup", "POST", account)
            out["me_at_b"] = await asyncio.to_thread(zoe.call, f"{b}/api/me")
            table = {"variant": "rummy40", "players": 2, "length": "short"}
            out["table"] = await asyncio.to_thread(zoe.call, f"{b}/api/quickplay", "POST", table)
            game = out["table"][1]["game_id"]
            # Her stream at a, read until it is her turn, then lost; her move through b; the stream
            # reopened at b after the last id she got, as EventSource reopens it.
            before = await asyncio.to_thread(
                zoe.updates, f"{a}/api/games/{game}/updates?seat=0", until_turn=0
            )
            last_id, last = before[-1]
            move = {"seat": 0, "action": last["legal_actions"][0]}
            out["moved"] = await asyncio.to_thread(zoe.call, f"{b}/api/games/{game}/actions", "POST", move)
            out["resumed"] = await asyncio.to_thread(
                zoe.updates, f"{b}/api/games/{game}/updates?seat=0", last_event_id=str(last_id)
            )
            out["before"] = before
            out["from_start"] = await asyncio.to_thread(zoe.updates, f"{b}/api/games/{game}/updates?seat=0")
            # Behind TLS: the page at https://SITE posts through a proxy that speaks http to the gateway.
            page = {"Host": SITE, "Origin": f"https://{SITE}"}
            proxied = {**page, "X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.7"}
            out["behind_proxy"] = await asyncio.to_thread(zoe.call, f"{b}/api/signout", "POST", {}, proxied)
            out["no_forwarded_proto"] = await asyncio.to_thread(
                zoe.call, f"{a}/api/signout", "POST", {}, page
            )
            return out
        finally:
            for gateway in replicas:
                await gateway.stop()
            await engine.stop()

    out = asyncio.run(scenario())
    status, account = out["signed_up"]
    assert status == 200
    assert out["me_at_b"] == (200, {"player": account["player"], "display_name": "Zoe", "kind": "human"})
    assert out["table"][0] == 200 and out["table"][1]["seat"] == 0
    assert out["moved"][0] == 200, out["moved"]
    last_id = out["before"][-1][0]
    (first_id, first), *_ = out["resumed"]
    # Resumed right after it, no gap and nothing she already had: the next event, her own move.
    assert (first_id, first["actor"]) == (last_id + 1, 0) and first["event_type"] != "view", first
    # Without Last-Event-ID a stream opens on a full view of the game as it stands.
    assert out["from_start"][0][1]["event_type"] == "view"
    assert out["behind_proxy"][0] == 200, out["behind_proxy"]
    status, refused = out["no_forwarded_proto"]
    assert status == 403 and refused["code"] == "csrf"
