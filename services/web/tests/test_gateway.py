"""The gateway's own answers, before any game call: signing up, in and out through the real identity
into HttpOnly cookies, the CSRF and origin checks on every state-changing call, and the requests it
refuses itself (nobody signed in, a name kept for bots, a body that is not an action, a private
table's oversized or mistyped fields). Served by uvicorn on a free port; the engine and matchmaking are
never dialled."""

from __future__ import annotations

import asyncio
import http.cookiejar
import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from meldstream_web.config import WebConfig
from meldstream_web.server import start_gateway
from rummy_identity.testing import PASSWORD, IdentityProcess
from rummy_infra.local import free_port
from rummy_service.config import SERVICE_CREDENTIAL_VARIABLE


@dataclass
class Browser:
    """One browser: its cookie jar, and the page's CSRF token read back from its cookie as app.js does."""

    base: str
    jar: http.cookiejar.CookieJar = field(default_factory=http.cookiejar.CookieJar)
    set_cookies: list[str] = field(default_factory=list)

    def csrf(self) -> str:
        return next((c.value or "" for c in self.jar if c.name == "ms_csrf"), "")

    def call(
        self, path: str, method: str = "GET", body: object = None, *, csrf: bool = True, origin: str = ""
    ) -> tuple[int, Any]:
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method)
        if csrf:
            request.add_header("X-CSRF-Token", self.csrf())
        if origin:
            request.add_header("Origin", origin)
        try:
            with opener.open(request, timeout=10) as reply:
                self.set_cookies = reply.headers.get_all("set-cookie") or []
                return reply.status, json.loads(reply.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())


async def _session(identity: IdentityProcess) -> dict[str, Any]:
    env = identity.service_env("web")
    config = WebConfig(
        address=f"127.0.0.1:{free_port()}",
        bot_pace_ms=0,
        identity=identity.address,
        service_credential=env[SERVICE_CREDENTIAL_VARIABLE],
        cookie_secure=False,  # plain http to 127.0.0.1 in this test: the jar keeps no Secure cookie
    )
    gateway = await start_gateway(config)
    zoe, stranger = Browser(gateway.url), Browser(gateway.url)
    sign_up = {"name": "gw-zoe", "password": PASSWORD, "display_name": "Zoe"}
    steps: dict[str, tuple[str, str, object, dict[str, Any]]] = {
        "variants": ("/api/variants", "GET", None, {}),  # the first answer sets the CSRF cookie
        "no_csrf": ("/api/signup", "POST", sign_up, {"csrf": False}),
        "other_site": ("/api/signup", "POST", sign_up, {"origin": "https://evil.example"}),
        "signed_up": ("/api/signup", "POST", sign_up, {}),
        "me": ("/api/me", "GET", None, {}),
        "bot_name": ("/api/signup", "POST", {"name": "bot-zoe", "password": PASSWORD}, {}),
        "bad_action": ("/api/games/g1/actions", "POST", {"seat": 0, "action": {"fly": {}}}, {}),
        "seed_not_hex": ("/api/games/g1/seed", "POST", {"seat": 0, "seed": "zz" * 16}, {}),
        "seed_too_long": ("/api/games/g1/seed", "POST", {"seat": 0, "seed": "ab" * 65}, {}),
        "signed_out": ("/api/signout", "POST", {}, {}),
        "me_after": ("/api/me", "GET", None, {}),
        "signed_in": ("/api/signin", "POST", {"name": "gw-zoe", "password": PASSWORD}, {}),
        # A private table's hostile input, bounded before matchmaking is asked.
        "long_table": ("/api/tables/pt-" + "x" * 200, "GET", None, {}),
        "seats_text": ("/api/tables", "POST", {"variant": "rummy40", "players": "2"}, {}),
        "huge_code": ("/api/tables/by-code", "POST", {"code": "Z" * 5000}, {}),
        "long_code": ("/api/tables/by-code", "POST", {"code": "Z" * 17}, {}),
        "wrong_password": ("/api/signin", "POST", {"name": "gw-zoe", "password": "not-it-at-all"}, {}),
    }
    try:
        answers: dict[str, Any] = {}
        for name, (path, method, body, options) in steps.items():
            answers[name] = await asyncio.to_thread(zoe.call, path, method, body, **options)
            if name == "signed_up":
                answers["cookies"] = list(zoe.set_cookies)
        answers["stranger"] = await asyncio.to_thread(stranger.call, "/api/games", csrf=False)
        return answers
    finally:
        await gateway.stop()


def test_sign_up_in_and_out_and_the_requests_the_gateway_refuses_itself(identity: IdentityProcess) -> None:
    a = asyncio.run(_session(identity))
    assert [a[k][1]["code"] for k in ("no_csrf", "other_site")] == ["csrf", "csrf"]
    assert a["no_csrf"][0] == a["other_site"][0] == 403

    status, account = a["signed_up"]
    assert status == 200 and account["name"] == "gw-zoe" and "token" not in json.dumps(account)
    session_cookies = {c.split("=", 1)[0]: c.lower() for c in a["cookies"]}
    for name in ("ms_access", "ms_refresh"):  # tokens the page's scripts never see
        assert all(part in session_cookies[name] for part in ("httponly", "samesite=strict", "path=/api"))
    assert a["me"] == (200, {"player": account["player"], "display_name": "Zoe", "kind": "human"})

    assert a["bot_name"][0] == 400 and a["bot_name"][1]["code"] == "name_reserved"
    assert a["bad_action"][0] == 400 and a["bad_action"][1]["message"].startswith("not an action")
    assert a["seed_not_hex"][0] == 400 and a["seed_not_hex"][1]["message"] == "a seed is hex digits"
    assert a["seed_too_long"][0] == 400 and "at most 128" in a["seed_too_long"][1]["message"]
    assert a["signed_out"][0] == 200 and a["me_after"] == (200, {"player": None})
    assert a["signed_in"][0] == 200 and a["signed_in"][1]["player"] == account["player"]
    assert a["long_table"][0] == 400 and a["long_table"][1]["code"] == "too_long"
    assert a["long_table"][1]["message"] == "table has 203 characters; at most 32"
    assert (
        a["seats_text"][0] == 400
        and a["seats_text"][1]["message"] == "players is a whole number from 0 to 2^31-1"
    )
    assert a["huge_code"][0] == 413 and a["huge_code"][1]["code"] == "too_large"
    assert a["long_code"][0] == 400 and a["long_code"][1]["code"] == "too_long"
    assert a["wrong_password"][0] == 401 and a["wrong_password"][1]["code"] == "bad_credentials"
    assert a["stranger"][0] == 401 and "sign in" in a["stranger"][1]["message"]

    status, variants = a["variants"]
    facts = variants["facts"]
    assert status == 200 and "kalooki" in variants["variants"]
    assert len(facts["contract"]["contracts"]) == 8 and facts["kalooki"]["players"] == [2, 5]
    assert variants["short"]["contract"] == "round 1 only" and "kalooki" not in variants["short"]
    assert variants["out_of_turn"] == ["buy_discard", "pass_buy"]  # the page asks, never lists them
    openings = {v: f["opening"] for v, f in facts.items()}
    assert openings == {"kalooki": 40, "rummy40": 40, "rummy500": 0, "contract": 0}
    spread = [v for v, f in facts.items() if f["spread_pile"]]
    assert spread == ["rummy500"] and facts["kalooki"]["contracts"] == [] and facts["contract"]["buys"]
