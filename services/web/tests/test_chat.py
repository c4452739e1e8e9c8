"""Chat on real Kafka and Redis, through two gateway replicas: a line posted at one reaches a listener
at the other; a line over the length limit is refused before anything else; the chat limit answers
429 with Retry-After; the operators' blocked words are masked; a mute, made at one replica, is the
account's at the other and keeps the muted account's lines out of its streams; a report reaches the
operators' view (at either replica) with the lines around it, and no one else's. At a table, the
players never get the spectators' lines (in the bot API's game stream either) while spectators read
both, and a bot posts through the bot API."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from meldstream_web.chat_config import ChatSettings
from meldstream_web.config import WebConfig
from meldstream_web.server import start_gateway
from rummy_client import GameClient
from rummy_engine.config import EngineConfig
from rummy_engine.engine import start_engine
from rummy_identity.testing import IdentityProcess
from rummy_infra.local import free_port
from rummy_store.locations import StoreLocation

pytestmark = pytest.mark.integration


def _call(url: str, token: str, method: str = "GET", body: object = None) -> tuple[int, dict[str, str], Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, method=method, headers={"Authorization": f"Bearer {token}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=15) as reply:
            return reply.status, dict(reply.headers), json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


def _heard(url: str, token: str, until: str) -> list[str]:
    """The texts of a chat stream's lines (an event stream's, or the bot API's chatLine objects), read
    until one is `until` (then the stream is dropped)."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    texts: list[str] = []
    with urllib.request.urlopen(request, timeout=15) as stream:
        for raw in stream:
            line = raw.decode()
            if line.startswith("data: "):
                texts.append(json.loads(line[6:])["text"])
            elif line.startswith("{") and (item := json.loads(line))["type"] == "chatLine":
                texts.append(item["text"])
            if texts and texts[-1] == until:
                return texts
    raise AssertionError(f"the stream closed after {texts}")


def test_chat_across_replicas_with_limits_filter_mute_and_report(
    identity: IdentityProcess, kafka_bootstrap: str, redis_url: str, unique_prefix: str
) -> None:
    ann = identity.player("chat-ann", display_name="Ann")
    bob = identity.player("chat-bob", display_name="Bob")
    ops = identity.operator("chat-ops")
    chat = ChatSettings(
        store=StoreLocation(kafka=kafka_bootstrap, redis=redis_url), rate="4/minute", blocked=("darn",)
    )
    config = WebConfig(
        identity=identity.address, cookie_secure=False, redis=redis_url, key_prefix=unique_prefix, chat=chat
    )

    async def scenario() -> dict[str, Any]:
        replicas = [
            await start_gateway(replace(config, address=f"127.0.0.1:{free_port()}")) for _ in range(2)
        ]
        a, b = (f"{gateway.url}/api/chat" for gateway in replicas)
        out: dict[str, Any] = {}
        try:
            hearing = asyncio.ensure_future(
                asyncio.to_thread(_heard, f"{b}/lobby/stream", bob.token(), "hello")
            )
            await asyncio.sleep(0.5)  # bob's stream is open at b
            out["long"] = await asyncio.to_thread(
                _call, f"{a}/lobby", ann.token(), "POST", {"text": "x" * 301}
            )
            out["hello"] = await asyncio.to_thread(
                _call, f"{a}/lobby", ann.token(), "POST", {"text": "hello"}
            )
            out["heard_at_b"] = await asyncio.wait_for(hearing, 15)
            out["darn"] = await asyncio.to_thread(
                _call, f"{a}/lobby", ann.token(), "POST", {"text": "Darn it"}
            )
            for text in ("three", "four", "five"):
                out[text] = await asyncio.to_thread(_call, f"{a}/lobby", ann.token(), "POST", {"text": text})
            out["mute"] = await asyncio.to_thread(
                _call, f"{a}/mutes", bob.token(), "POST", {"account": ann.id, "muted": True}
            )
            out["mutes_at_b"] = await asyncio.to_thread(_call, f"{b}/mutes", bob.token())
            await asyncio.to_thread(_call, f"{b}/lobby", bob.token(), "POST", {"text": "bob here"})
            out["bob_hears"] = await asyncio.to_thread(_heard, f"{a}/lobby/stream", bob.token(), "bob here")
            line = out["hello"][2]["id"]
            out["report"] = await asyncio.to_thread(
                _call, f"{b}/reports", bob.token(), "POST", {"line": line, "reason": "<rude>"}
            )
            out["not_operator"] = await asyncio.to_thread(_call, f"{a}/reports", bob.token())
            for _ in range(50):
                out["reports"] = await asyncio.to_thread(_call, f"{a}/reports", ops.token())
                if out["reports"][2]["reports"]:
                    break
                await asyncio.sleep(0.1)
        finally:
            for gateway in replicas:
                await gateway.stop()
        return out

    out = asyncio.run(scenario())
    assert out["long"][0] == 400 and out["long"][2]["code"] == "too_long"
    assert "xxxxx" not in out["long"][2]["message"]
    assert out["hello"][0] == 200 and out["hello"][2]["name"] == "Ann"
    assert out["heard_at_b"][-1] == "hello"
    assert out["darn"][2]["text"] == "**** it"
    assert out["four"][0] == 200
    assert out["five"][0] == 429 and out["five"][2]["code"] == "rate_limited"
    assert int(out["five"][1]["retry-after"]) >= 1
    assert out["mutes_at_b"][2] == {"muted": [ann.id]}
    assert out["bob_hears"] == ["bob here"]  # ann's lines kept out of bob's stream
    assert out["report"][0] == 200
    assert out["not_operator"][0] == 403 and out["not_operator"][2]["code"] == "not_operator"
    (report,) = out["reports"][2]["reports"]
    assert report["line"]["text"] == "hello" and report["reason"] == "<rude>"
    assert [other["text"] for other in report["context"]] == ["hello", "**** it", "three", "four", "bob here"]


def test_players_never_see_spectators_lines_and_a_bot_chats_over_the_bot_api(
    identity: IdentityProcess, kafka_bootstrap: str, redis_url: str, unique_prefix: str, tmp_path: Path
) -> None:
    ann, bob, carl = (identity.player(f"table-{name}") for name in ("ann", "bob", "carl"))
    chat = ChatSettings(store=StoreLocation(kafka=kafka_bootstrap, redis=redis_url))

    async def scenario() -> dict[str, Any]:
        engine = await start_engine(
            EngineConfig(address="127.0.0.1:0", data_dir=str(tmp_path / "engine"), identity=identity.address)
        )
        config = WebConfig(
            address=f"127.0.0.1:{free_port()}",
            engine=engine.address,
            identity=identity.address,
            cookie_secure=False,
            key_prefix=unique_prefix,
            chat=chat,
        )
        gateway = await start_gateway(config)
        out: dict[str, Any] = {}
        try:
            async with GameClient(engine.address, identity.operator("table-ops").token) as operator:
                game = (
                    await operator.create_game("rummy40", [ann.id, bob.id], turn_timeout_ms=3_600_000)
                ).game_id
            table = f"{gateway.url}/api/chat/games/{game}"
            out["carl"] = await asyncio.to_thread(
                _call, table, carl.token(), "POST", {"text": "from the rail"}
            )
            out["ann"] = await asyncio.to_thread(_call, table, ann.token(), "POST", {"text": "good luck"})
            bot_chat = f"{gateway.url}/api/v1/games/{game}/chat"
            out["bob"] = await asyncio.to_thread(_call, bot_chat, bob.token(), "POST", {"text": "thanks"})
            out["bob_reads"] = await asyncio.to_thread(
                _heard, f"{gateway.url}/api/v1/games/{game}/stream", bob.token(), "thanks"
            )
            out["carl_reads"] = await asyncio.to_thread(_heard, f"{table}/stream", carl.token(), "thanks")
        finally:
            await gateway.stop()
            await engine.stop()
        return out

    out = asyncio.run(scenario())
    assert out["carl"][2]["channel"] == "spectators"
    assert out["ann"][2]["channel"] == "players"
    assert out["bob"][0] == 200 and out["bob"][2]["channel"] == "players"
    assert out["bob_reads"] == ["good luck", "thanks"]
    assert out["carl_reads"] == ["from the rail", "good luck", "thanks"]


def test_a_gateway_whose_chat_store_cannot_open_serves_the_rest(
    identity: IdentityProcess, tmp_path: Path
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    chat = ChatSettings(store=StoreLocation(directory=str(blocked / "chat")))
    config = WebConfig(
        address=f"127.0.0.1:{free_port()}", identity=identity.address, cookie_secure=False, chat=chat
    )
    ann = identity.player("table-ann")

    async def scenario() -> tuple[Any, ...]:
        gateway = await start_gateway(config)
        try:
            said = await asyncio.to_thread(
                _call, f"{gateway.url}/api/chat/lobby", ann.token(), "POST", {"text": "hi"}
            )
            variants = await asyncio.to_thread(_call, f"{gateway.url}/api/variants", ann.token())
        finally:
            await gateway.stop()
        return said, variants

    said, variants = asyncio.run(scenario())
    assert said[0] == 503 and said[2]["code"] == "chat_unavailable" and said[1]["retry-after"] == "5"
    assert variants[0] == 200
