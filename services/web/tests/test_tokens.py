"""The account page's calls (/api/tokens, /api/bots) through the real identity: a person makes a token
with the scopes they chose, sees its secret once, lists it, and a program exchanges it for access
tokens until it is revoked; a bot account of theirs gets its own; what identity refuses (a scope the
account may not hold, someone else's bot, a guest) comes back as its refusal, and what the gateway
refuses itself (no CSRF token, a field or body too long) never reaches identity."""

from __future__ import annotations

import asyncio
import base64
import http.cookiejar
import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest
from meldstream_web import tokens
from meldstream_web.config import WebConfig
from meldstream_web.server import start_gateway
from rummy_client.identity import IdentityClient
from rummy_identity import accounts
from rummy_identity.testing import PASSWORD, IdentityProcess
from rummy_infra.local import free_port
from rummy_service.config import SERVICE_CREDENTIAL_VARIABLE


@dataclass
class Browser:
    """One browser's cookie jar; each call sends the page's CSRF token back as app.js does."""

    base: str
    jar: http.cookiejar.CookieJar = field(default_factory=http.cookiejar.CookieJar)

    def call(
        self, path: str, method: str = "GET", body: object = None, *, csrf: bool = True, raw: bytes = b""
    ) -> tuple[int, Any, dict[str, str]]:
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        data = raw or (None if body is None else json.dumps(body).encode())
        request = urllib.request.Request(self.base + path, data=data, method=method)
        if csrf:
            request.add_header(
                "X-CSRF-Token", next((c.value or "" for c in self.jar if c.name == "ms_csrf"), "")
            )
        try:
            with opener.open(request, timeout=10) as reply:
                return reply.status, json.loads(reply.read()), dict(reply.headers)
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read()), dict(error.headers)


def _scopes(access_token: str) -> list[str]:
    """The `scope` claim of an access token (read, not verified: identity made it a moment ago)."""
    payload = access_token.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return str(claims["scope"]).split()


def _exchange(identity: IdentityProcess, api_token: str) -> list[str] | grpc.StatusCode:
    """What a program gets for the token at identity: its access token's scopes, or the refusal."""
    with IdentityClient(identity.address) as client:
        try:
            return _scopes(client.exchange(api_token).token)
        except grpc.RpcError as error:
            return error.code()


async def _session(identity: IdentityProcess) -> dict[str, Any]:
    config = WebConfig(
        address=f"127.0.0.1:{free_port()}",
        bot_pace_ms=0,
        identity=identity.address,
        service_credential=identity.service_env("web")[SERVICE_CREDENTIAL_VARIABLE],
        cookie_secure=False,  # plain http to 127.0.0.1: the jar keeps no Secure cookie
    )
    gateway = await start_gateway(config)
    zoe, sam, guest = Browser(gateway.url), Browser(gateway.url), Browser(gateway.url)
    a: dict[str, Any] = {}

    def run(who: Browser, key: str, path: str, method: str = "GET", body: object = None, **kw: Any) -> Any:
        a[key] = who.call(path, method, body, **kw)
        return a[key][1]

    def steps() -> None:
        for who, name in ((zoe, "tk-zoe"), (sam, "tk-sam")):
            who.call("/api/variants")  # the first answer sets the CSRF cookie
            who.call("/api/signup", "POST", {"name": name, "password": PASSWORD})
        guest.call("/api/variants")
        guest.call("/api/guest", "POST", {})
        run(Browser(gateway.url), "stranger", "/api/tokens")
        run(zoe, "empty", "/api/tokens")
        run(zoe, "no_csrf", "/api/tokens", "POST", {"label": "x", "scopes": ["watch"]}, csrf=False)
        run(zoe, "long_label", "/api/tokens", "POST", {"label": "x" * 65, "scopes": ["watch"]})
        run(zoe, "long_scope", "/api/tokens", "POST", {"scopes": ["w" * 33]})
        run(zoe, "many_scopes", "/api/tokens", "POST", {"scopes": ["watch"] * 5})
        run(zoe, "big_body", "/api/tokens", "POST", raw=json.dumps({"label": "x" * 5000}).encode())
        run(zoe, "not_json", "/api/tokens", "POST", raw=b"label=x")
        run(zoe, "bad_scope", "/api/tokens", "POST", {"label": "ops", "scopes": ["operate"]})
        created = run(
            zoe, "created", "/api/tokens", "POST", {"label": "laptop \u202e<b>", "scopes": ["watch"]}
        )
        a["exchanged"] = _exchange(identity, created["api_token"])
        run(zoe, "listed", "/api/tokens")
        bot = run(zoe, "bot", "/api/bots", "POST", {"name": "tk-zoe-bot", "display_name": "Zoe's bot"})
        run(zoe, "bot_name_long", "/api/bots", "POST", {"name": "b" * 65})
        bot_token = run(zoe, "bot_token", "/api/tokens", "POST", {"bot": bot["bot"], "scopes": ["bot:play"]})
        a["bot_exchanged"] = _exchange(identity, bot_token["api_token"])
        run(zoe, "bot_listed", f"/api/tokens?bot={bot['bot']}")
        run(zoe, "bot_play_for_zoe", "/api/tokens", "POST", {"scopes": ["bot:play"]})
        run(sam, "not_his_bot", f"/api/tokens?bot={bot['bot']}")
        run(sam, "not_his_token", f"/api/tokens/{created['token']['token_id']}", "DELETE")
        run(guest, "guest", "/api/tokens")
        token_id = created["token"]["token_id"]
        run(zoe, "revoke_no_csrf", f"/api/tokens/{token_id}", "DELETE", csrf=False)
        run(zoe, "revoked", f"/api/tokens/{token_id}", "DELETE")
        a["after"] = _exchange(identity, created["api_token"])
        run(zoe, "revoked_again", f"/api/tokens/{token_id}", "DELETE")
        run(zoe, "long_id", f"/api/tokens/{'t' * 65}", "DELETE")
        run(zoe, "listed_after", "/api/tokens")
        a["bot_still"] = _exchange(identity, bot_token["api_token"])

    try:
        await asyncio.to_thread(steps)
        return a
    finally:
        await gateway.stop()


def test_tokens_made_listed_exchanged_and_revoked_from_the_account_page(identity: IdentityProcess) -> None:
    a = asyncio.run(_session(identity))
    assert a["stranger"][0] == 401
    assert a["empty"][:2] == (200, {"bot": "", "scopes": ["play", "watch"], "tokens": []})

    def refused(key: str) -> tuple[int, str]:
        return a[key][0], a[key][1]["code"]

    assert refused("no_csrf") == (403, "csrf") and refused("revoke_no_csrf") == (403, "csrf")
    # The gateway's own limits: the field named, the value never echoed.
    assert refused("long_label") == (400, "too_long")
    assert a["long_label"][1]["message"] == "label has 65 characters; at most 64"
    assert refused("long_scope") == (400, "too_long") and refused("many_scopes") == (400, "too_long")
    assert refused("big_body") == (413, "too_large") and "x" * 40 not in json.dumps(a["big_body"][1])
    assert refused("not_json")[0] == 400 and a["not_json"][1]["message"] == "the body is not JSON"
    assert refused("bot_name_long") == (400, "too_long") and refused("long_id") == (400, "too_long")
    # Identity's rules, passed on.
    assert refused("bad_scope") == (400, "bad_scope") and refused("bot_play_for_zoe") == (400, "bad_scope")
    assert refused("not_his_bot") == (403, "not_your_bot") and refused("guest") == (403, "humans_only")
    assert refused("not_his_token") == (404, "no_token")  # his own list holds no such token

    status, created, headers = a["created"]
    assert status == 200 and created["api_token"] and headers["cache-control"] == "no-store"
    assert created["token"]["label"] == "laptop \u202e<b>" and created["token"]["scopes"] == ["watch"]
    assert a["exchanged"] == ["watch"]  # the scope chosen, no more
    status, listed, headers = a["listed"]
    assert status == 200 and listed["tokens"] == [created["token"]] and headers["cache-control"] == "no-store"
    assert created["api_token"] not in json.dumps(listed)  # shown once: never in a list

    assert a["bot"][0] == 200 and a["bot"][1]["name"] == "tk-zoe-bot"
    assert a["bot"][1]["display_name"] == "Zoe's bot"
    assert a["bot_exchanged"] == ["bot:play"]
    bot_listed = a["bot_listed"][1]
    assert bot_listed["scopes"] == ["bot:play", "watch"] and len(bot_listed["tokens"]) == 1

    assert a["revoked"][:2] == (200, {"revoked": created["token"]["token_id"]})
    assert a["after"] == grpc.StatusCode.UNAUTHENTICATED  # its next exchange is refused
    assert refused("revoked_again") == (404, "no_token")
    assert a["listed_after"][1]["tokens"] == []
    assert a["bot_still"] == ["bot:play"]  # the bot's own token is another


@pytest.mark.parametrize(
    "gateway, identity_rule",
    [(tokens.PERSON_SCOPES, accounts.PERSON_SCOPES), (tokens.BOT_SCOPES, accounts.BOT_SCOPES)],
)
def test_the_page_offers_the_scopes_identity_allows(
    gateway: tuple[str, ...], identity_rule: frozenset[str]
) -> None:
    assert frozenset(gateway) == identity_rule and len(gateway) == len(identity_rule)
