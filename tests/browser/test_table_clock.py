"""The clock a host chooses, through the gateway's HTTP routes on the real platform (`meldstream run`):
a private table's and a challenge's time bank is shown to the invited before they join, and the game
they start gives every seat that bank (the engine's view says so); a bank out of its bounds is refused
with 400 `bad_clock`, and nothing is made (no table, no challenge)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
import uuid
from typing import Any

from rummy.identity.v1 import identity_pb2 as ipb
from rummy_client.identity import IdentityClient
from rummy_identity.testing import PASSWORD

from .conftest import Platform

OUT_OF_BOUNDS = (1, 4_999, 600_001)  # 0 (none) or 5,000-600,000 ms; unset: the engine's default


def _accounts(platform: Platform, count: int) -> list[tuple[str, str]]:
    """`count` bot accounts of one owner, each (account id, access token)."""
    suffix = uuid.uuid4().hex[:6]
    out = []
    with IdentityClient(platform.identity) as identity:
        owner = identity.session_token(identity.sign_up(f"clockowner-{suffix}", PASSWORD, device="tests"))
        for n in range(count):
            made = ipb.CreateBotAccountRequest(name=f"clockbot{n}-{suffix}")
            bot = identity.call("CreateBotAccount", made, owner).account.account_id
            request = ipb.CreateApiTokenRequest(account_id=bot, label="clock", scopes=["bot:play", "watch"])
            out.append(
                (bot, identity.exchange(identity.call("CreateApiToken", request, owner).api_token).token)
            )
    return out


def _call(platform: Platform, path: str, body: object = None, token: str = "") -> tuple[int, Any]:
    request = urllib.request.Request(
        platform.url + path,
        data=None if body is None else json.dumps(body).encode(),
        method="GET" if body is None else "POST",
        headers={"Authorization": f"Bearer {token}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=20) as reply:
            return reply.status, json.loads(reply.readline())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def _banks(platform: Platform, game_id: str, token: str) -> list[int]:
    """Each seat's bank left in the game's opening view, as the engine serves it."""
    status, update = _call(platform, f"/api/v1/games/{game_id}/stream", token=token)
    assert status == 200, update
    return [int(seat["bank_left_ms"]) for seat in update["view"]["seats"]]


def test_a_private_table_s_time_bank_is_shown_before_joining_and_reaches_the_game(platform: Platform) -> None:
    (host, host_token), (guest, guest_token) = _accounts(platform, 2)
    for bank in OUT_OF_BOUNDS:
        status, answer = _call(
            platform, "/api/tables", {"variant": "rummy40", "players": 2, "time_bank_ms": bank}, host_token
        )
        assert (status, answer["code"]) == (400, "bad_clock"), (bank, answer)
        assert "time_bank_ms" in answer["message"]
    settings = {"variant": "rummy40", "players": 2, "turn_timeout_ms": 30_000, "time_bank_ms": 90_000}
    status, table = _call(platform, "/api/tables", settings, host_token)
    assert status == 200, table
    base = f"/api/tables/{table['table_id']}"
    status, seen = _call(platform, base, token=guest_token)  # the invited, before joining
    assert status == 200 and seen["your_seat"] == -1 and seen["time_bank_ms"] == 90_000, seen
    status, joined = _call(platform, base + "/join", {}, guest_token)
    assert status == 200, joined
    deadline = time.monotonic() + 30
    while not joined["game_id"] and time.monotonic() < deadline:
        time.sleep(0.2)
        status, joined = _call(platform, base, token=guest_token)
    assert joined["game_id"], joined
    assert _banks(platform, joined["game_id"], guest_token) == [90_000, 90_000]
    # A table without a bank chosen leaves it to the engine: no `time_bank_ms` in its answer.
    status, plain = _call(platform, "/api/tables", {"variant": "rummy40", "players": 2}, host_token)
    assert status == 200 and "time_bank_ms" not in plain, plain
    assert host != guest


def test_a_challenge_s_time_bank_reaches_its_game_and_out_of_bounds_makes_nothing(platform: Platform) -> None:
    (_, token), (rival, rival_token) = _accounts(platform, 2)
    for bank in OUT_OF_BOUNDS:
        body = {"variant": "rummy40", "time_bank_ms": bank}
        status, answer = _call(platform, f"/api/v1/challenge/{rival}", body, token)
        assert (status, answer["code"]) == (400, "bad_clock"), (bank, answer)
    status, listed = _call(platform, "/api/v1/challenge", token=token)
    assert status == 200 and listed["out"] == [], listed
    status, made = _call(
        platform, f"/api/v1/challenge/{rival}", {"variant": "rummy40", "time_bank_ms": 0}, token
    )
    assert status == 200 and made["time_bank_ms"] == 0, made
    status, accepted = _call(platform, f"/api/v1/challenge/{made['id']}/accept", {}, rival_token)
    assert status == 200 and accepted["game_id"], accepted
    assert _banks(platform, accepted["game_id"], rival_token) == [0, 0]  # none, as chosen
