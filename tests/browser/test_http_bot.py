"""The JavaScript bot (clients/js/bot.mjs), run by Node as its writer runs it against the real platform:
a bot account's API token its owner made, then only the gateway's HTTP bot API (docs/clients/http-api.md)
on Node's own fetch. Another account challenges it to a short game of every variant through the same
API and plays its side with the platform's own bot (the SDK's greedy BotPlayer, as quick play seats);
the JS bot accepts each challenge from its event stream and plays the games (side by side) to their end
from the listed legal actions.
Then challenges answered once, by the right account, on both accounts' event streams, and the API's
refusals as such a bot meets them, each in the gateway's one JSON shape."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rummy.identity.v1 import identity_pb2 as ipb
from rummy_client import GameClient
from rummy_client.bots import BotPlayer
from rummy_client.identity import IdentityClient
from rummy_identity.testing import PASSWORD
from rummy_rules.variants import PLAYABLE_VARIANTS

from .conftest import Platform

pytestmark = pytest.mark.slow
BOT = Path(__file__).resolve().parents[2] / "clients" / "js" / "bot.mjs"


def _bot_tokens(platform: Platform, count: int = 1) -> list[tuple[str, str]]:
    """A person's bot accounts and an API token of each (`bot:play`, `watch`), as the account page makes
    them: (account id, API token) pairs."""
    suffix = uuid.uuid4().hex[:6]
    tokens = []
    with IdentityClient(platform.identity) as identity:
        owner = identity.session_token(identity.sign_up(f"jsowner-{suffix}", PASSWORD, device="tests"))
        for n in range(count):
            made = ipb.CreateBotAccountRequest(name=f"jsbot{n}-{suffix}")
            bot = identity.call("CreateBotAccount", made, owner).account.account_id
            request = ipb.CreateApiTokenRequest(account_id=bot, label="js bot", scopes=["bot:play", "watch"])
            tokens.append((bot, identity.call("CreateApiToken", request, owner).api_token))
    return tokens


def _access(platform: Platform, count: int) -> list[tuple[str, str]]:
    """`count` bot accounts, each (account id, access token)."""
    with IdentityClient(platform.identity) as identity:
        return [(bot, identity.exchange(api_token).token) for bot, api_token in _bot_tokens(platform, count)]


def _events(platform: Platform, token: str) -> Iterator[dict[str, Any]]:
    """The account's event stream, one object a line (the keep-alive empty lines skipped)."""
    request = urllib.request.Request(
        platform.url + "/api/v1/stream/event", headers={"Authorization": f"Bearer {token}"}
    )
    with urllib.request.urlopen(request, timeout=30) as reply:
        for line in reply:
            if line.strip():
                yield json.loads(line)


def _next(events: Iterator[dict[str, Any]], kind: str, challenge: str) -> dict[str, Any]:
    """The next `kind` event of `challenge` on a stream (its other lines skipped)."""
    return next(e for e in events if e["type"] == kind and e["challenge"]["id"] == challenge)


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


async def _challenge_and_play(platform: Platform, token: str, opponent: str) -> dict[str, str]:
    """The challenger's side: `opponent` challenged to a short game of every variant, each game played
    by the platform's bot as it starts on the challenger's event stream, and to one at 5 s a turn, which
    it declines as too fast; {game: variant} once all end."""
    for variant in PLAYABLE_VARIANTS:
        status, made = _call(platform, f"/api/v1/challenge/{opponent}", {"variant": variant}, token)
        assert status == 200 and made["status"] == "created", made
    fast = {"variant": "kalooki", "turn_timeout_ms": 5000}
    status, too_fast = _call(platform, f"/api/v1/challenge/{opponent}", fast, token)
    assert status == 200, too_fast
    events = _events(platform, token)
    games: dict[str, str] = {}
    declined = ""
    async with GameClient(platform.env["ENGINE_ADDRESS"], token, retry_for_s=15.0) as client:
        playing = []
        while len(games) < len(PLAYABLE_VARIANTS) or not declined:
            event = await asyncio.to_thread(next, events)
            if event["type"] == "challengeDeclined":
                assert event["challenge"]["id"] == too_fast["id"], event
                declined = event["challenge"]["reason"]
            elif event["type"] == "gameStart":
                game = event["game"]
                games[game["game_id"]] = game["variant"]
                playing.append(asyncio.create_task(BotPlayer(client, game["game_id"], game["seat"]).play()))
        await asyncio.gather(*playing)
    assert sorted(games.values()) == sorted(PLAYABLE_VARIANTS) and declined == "tooFast"
    return games


def test_the_javascript_bot_accepts_challenges_and_plays_every_variant_to_its_end(platform: Platform) -> None:
    node = shutil.which("node")
    assert node, "Node 20 is part of make setup (tools/web)"
    assert len(BOT.read_text().splitlines()) <= 100
    (js_bot, api_token), (rival, rival_token) = _bot_tokens(platform, 2)
    with IdentityClient(platform.identity) as identity:
        token = identity.exchange(rival_token).token
    command = [node, str(BOT), platform.url, api_token, str(len(PLAYABLE_VARIANTS))]
    bot = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        games = asyncio.run(asyncio.wait_for(_challenge_and_play(platform, token, js_bot), 240))
        out, err = bot.communicate(timeout=60)
    finally:
        if bot.poll() is None:
            bot.kill()
            bot.communicate()
    assert bot.returncode == 0, out + err + "".join(platform.lines[-30:])
    assert re.search(rf"^signed in as {js_bot} \(bot\)", out, re.M), out
    accepted = re.findall(rf"^challenge ch-\S+ from {rival} to (\S+): accepted$", out, re.M)
    assert sorted(accepted) == sorted(PLAYABLE_VARIANTS), out
    assert re.findall(rf"^challenge ch-\S+ from {rival} to (\S+): declined$", out, re.M) == ["kalooki"], out
    played = re.findall(r"^(\S+) (\S+) over after (\d+) moves of mine: winners", out, re.M)
    assert {game: variant for variant, game, _ in played} == games, out
    assert all(int(moves) > 0 for _, _, moves in played), out
    finished = re.findall(r"^(\S+) finished: scoring's winners \S", out, re.M)
    assert sorted(finished) == sorted(games), out


def test_a_challenge_is_answered_once_by_the_challenged_account(platform: Platform) -> None:
    (one, token), (two, challenged), (_, stranger) = _access(platform, 3)
    status, made = _call(platform, f"/api/v1/challenge/{two}", {"variant": "rummy500"}, token)
    assert status == 200 and re.fullmatch(r"ch-[\w-]{22}", made["id"]), made
    assert (made["challenger"], made["challenged"], made["status"]) == (one, two, "created")
    assert "table_id" not in made and made["options"] == {"target_score": 100}  # a short match
    theirs, mine = _events(platform, challenged), _events(platform, token)
    assert _next(theirs, "challenge", made["id"])["challenge"]["challenger_bot"] is True
    assert _next(mine, "challenge", made["id"])["challenge"]["status"] == "created"
    status, theirs_listed = _call(platform, "/api/v1/challenge", token=challenged)
    assert status == 200 and [c["id"] for c in theirs_listed["in"]] == [made["id"]], theirs_listed
    assert theirs_listed["out"] == [] and "table_id" not in theirs_listed["in"][0]
    status, mine_listed = _call(platform, "/api/v1/challenge", token=token)
    assert [c["id"] for c in mine_listed["out"]] == [made["id"]] and mine_listed["in"] == [], mine_listed
    _, them = _call(platform, "/api/v1/account", token=challenged)
    assert mine_listed["out"][0]["challenged_name"] == them["display_name"] == made["challenged_name"]
    named = them["display_name"]  # these bots' display name is their name: looked up in another case
    status, found = _call(platform, f"/api/v1/accounts/{named.upper()}", token=token)
    assert (status, found) == (200, {"player": two, "name": named, "display_name": named, "kind": "bot"})
    decide = f"/api/v1/challenge/{made['id']}/"
    for path, body, caller, expected in [
        (decide + "accept", {}, stranger, (403, "not_challenged")),
        (decide + "accept", {}, token, (403, "not_challenged")),  # the challenger cannot seat the other
        (decide + "cancel", {}, challenged, (403, "not_challenger")),
        (decide + "decline", {"reason": "<b>rude</b>"}, challenged, (400, "bad_reason")),
        (decide + "decline", {"reason": "x" * 17}, challenged, (400, "too_long")),
        ("/api/v1/challenge/ch-" + "x" * 22 + "/accept", {}, challenged, (404, "no_such_challenge")),
        ("/api/v1/challenge/" + "c" * 26 + "/accept", {}, challenged, (400, "too_long")),
        ("/api/v1/challenge/" + "a" * 65, {"variant": "kalooki"}, token, (400, "too_long")),
        (f"/api/v1/challenge/{one}", {"variant": "kalooki"}, token, (400, "self_challenge")),
        ("/api/v1/challenge/u" + "0" * 16, {"variant": "kalooki"}, token, (404, "no_account")),
        (f"/api/v1/accounts/nobody-{uuid.uuid4().hex[:8]}", None, token, (404, "no_account")),
        ("/api/v1/accounts/" + "n" * 65, None, token, (400, "too_long")),
        (f"/api/v1/challenge/{two}", {"variant": "snap"}, token, (400, "unknown_variant")),
        (
            f"/api/v1/challenge/{two}",
            {"variant": "kalooki", "options": {"o" * 65: 1}},
            token,
            (400, "too_long"),
        ),
        (
            f"/api/v1/challenge/{two}",
            {"variant": "kalooki", "turn_timeout_ms": 10},
            token,
            (400, "bad_clock"),
        ),
    ]:
        status, answer = _call(platform, path, body, caller)
        assert set(answer) == {"status", "code", "message"}, (path, answer)
        assert (status, answer["code"]) == expected, (path, answer)
        assert "rude" not in answer["message"] and "o" * 65 not in answer["message"]
    status, declined = _call(platform, decide + "decline", {"reason": "later"}, challenged)
    assert (status, declined["status"], declined["reason"]) == (200, "declined", "later"), declined
    assert _next(mine, "challengeDeclined", made["id"])["challenge"]["reason"] == "later"
    status, answer = _call(platform, decide + "accept", {}, challenged)
    assert (status, answer["code"]) == (409, "challenge_decided"), answer
    status, again = _call(platform, f"/api/v1/challenge/{two}", {"variant": "kalooki"}, token)
    status, canceled = _call(platform, f"/api/v1/challenge/{again['id']}/cancel", {}, token)
    assert (status, canceled["status"]) == (200, "canceled"), canceled
    assert _next(theirs, "challengeCanceled", again["id"])["challenge"]["status"] == "canceled"
    status, answer = _call(platform, f"/api/v1/challenge/{again['id']}/accept", {}, challenged)
    assert (status, answer["code"]) == (409, "challenge_decided"), answer
    for _ in range(11):  # the 10 undecided challenges an account may have made, and one more
        status, answer = _call(platform, f"/api/v1/challenge/{two}", {"variant": "kalooki"}, token)
    assert (status, answer["code"]) == (429, "too_many_challenges"), answer


def test_the_bot_api_s_refusals(platform: Platform) -> None:
    with IdentityClient(platform.identity) as identity:
        token, stranger = (identity.exchange(api_token).token for _, api_token in _bot_tokens(platform, 2))
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
