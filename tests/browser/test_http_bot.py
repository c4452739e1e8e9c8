"""The JavaScript bot (clients/js/bot.mjs), run by Node as its writer runs it against the real platform:
a bot account's API token its owner made, then only the gateway's HTTP bot API (docs/clients/http-api.md)
on Node's own fetch. It seeks a short game of every variant against the platform's bots and plays them
(side by side) to their end from the listed legal actions; the account's event stream starts and
finishes each game.
Then the API's refusals as such a bot meets them, each in the gateway's one JSON shape."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest
from rummy.identity.v1 import identity_pb2 as ipb
from rummy_client.identity import IdentityClient
from rummy_identity.testing import PASSWORD
from rummy_rules.variants import PLAYABLE_VARIANTS

from .conftest import Platform

pytestmark = pytest.mark.slow
BOT = Path(__file__).resolve().parents[2] / "clients" / "js" / "bot.mjs"


def _bot_tokens(platform: Platform, count: int = 1) -> list[str]:
    """A person's bot accounts and an API token of each (`bot:play`, `watch`), as the account page makes
    them."""
    suffix = uuid.uuid4().hex[:6]
    tokens = []
    with IdentityClient(platform.identity) as identity:
        owner = identity.session_token(identity.sign_up(f"jsowner-{suffix}", PASSWORD, device="tests"))
        for n in range(count):
            made = ipb.CreateBotAccountRequest(name=f"jsbot{n}-{suffix}")
            bot = identity.call("CreateBotAccount", made, owner).account.account_id
            request = ipb.CreateApiTokenRequest(account_id=bot, label="js bot", scopes=["bot:play", "watch"])
            tokens.append(identity.call("CreateApiToken", request, owner).api_token)
    return tokens


def _call(platform: Platform, path: str, body: object = None, token: str = "") -> tuple[int, Any]:
    request = urllib.request.Request(
        platform.url + path,
        data=None if body is None else json.dumps(body).encode(),
        method="GET" if body is None else "POST",
        headers={"Authorization": f"Bearer {token}"} if token else {},
    )
    try:
        with urllib.request.urlopen(request, timeout=20) as reply:
            return reply.status, json.loads(reply.readline())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_the_javascript_bot_plays_every_variant_to_its_end(platform: Platform) -> None:
    node = shutil.which("node")
    assert node, "Node 20 is part of make setup (tools/web)"
    assert len(BOT.read_text().splitlines()) <= 100
    (api_token,) = _bot_tokens(platform)
    run = subprocess.run(
        [node, str(BOT), platform.url, api_token], capture_output=True, text=True, timeout=240, check=False
    )
    assert run.returncode == 0, run.stdout + run.stderr + "".join(platform.lines[-30:])
    assert re.search(r"^signed in as \S+ \(bot\)", run.stdout, re.M), run.stdout
    played = re.findall(r"^(\S+) (\S+) over after (\d+) moves of mine: winners", run.stdout, re.M)
    assert sorted(variant for variant, _, _ in played) == sorted(PLAYABLE_VARIANTS), run.stdout
    assert all(int(moves) > 0 for _, _, moves in played), run.stdout
    finished = re.findall(r"^(\S+) finished: scoring's winners \S", run.stdout, re.M)
    assert sorted(finished) == sorted(game for _, game, _ in played), run.stdout


def test_the_bot_api_s_refusals(platform: Platform) -> None:
    with IdentityClient(platform.identity) as identity:
        token, stranger = (identity.exchange(api_token).token for api_token in _bot_tokens(platform, 2))
    checks: list[tuple[str, object, tuple[int, str]]] = [
        ("/api/v1/seek", {"variant": "v" * 33}, (400, "too_long")),
        ("/api/v1/seek", {"variant": "snap"}, (400, "unknown_variant")),  # the engine's own refusal
        ("/api/v1/seek", {"variant": "kalooki", "length": "forever"}, (400, "")),
        ("/api/v1/games/" + "g" * 65 + "/stream", None, (400, "too_long")),
        ("/api/v1/games/no-such-game/move", {"action": {"fly": {}}}, (400, "")),
        ("/api/v1/games/g/move", {"action": {"draw_from_stock": {}}, "seat": 2**40}, (400, "")),
        ("/api/v1/games/g/stream?after=" + "9" * 20, None, (400, "")),  # past a uint64: refused here
    ]
    for path, body, expected in checks:
        status, answer = _call(platform, path, body, token)
        assert set(answer) == {"status", "code", "message"}, (path, answer)
        assert (status, answer["code"]) == expected, (path, answer)
        assert "v" * 33 not in answer["message"]
    status, game = _call(platform, "/api/v1/seek", {"variant": "kalooki"}, token)
    assert status == 200
    move = {"action": {"draw_from_stock": {}}, "seat": 0}
    status, answer = _call(platform, f"/api/v1/games/{game['game_id']}/move", move, stranger)
    assert (status, answer["code"]) == (403, "not_your_seat"), answer  # another bot's seat
    del move["seat"]  # its own seat, looked up: not at this table
    status, answer = _call(platform, f"/api/v1/games/{game['game_id']}/move", move, stranger)
    assert (status, answer["code"]) == (403, "not_at_table"), answer
    status, update = _call(platform, f"/api/v1/games/{game['game_id']}/stream", token=token)
    assert status == 200 and update["type"] == "gameState" and update["seat"] == game["seat"] == 0
    assert update["view"]["hand"] and update["view"]["seats"][1]["bot"]
