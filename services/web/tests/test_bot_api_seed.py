"""The bot API's seed route (`POST /api/v1/games/{game}/seed`) against a real engine with a seed window:
a seat's seed (its seat found by the gateway) is logged as that seat's SeedContributed, the same seed
again is a retry, and every refusal is in the gateway's one JSON shape with its reason code, the log
untouched: a seed of the wrong length (the engine's `bad_seed_length`), one not whole hex bytes, one past
the hex limit (never echoed), a second different seed from the seat, a stranger, another seat's."""

from __future__ import annotations

import asyncio
import json
import secrets
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from meldstream_web.config import WebConfig
from meldstream_web.server import start_gateway
from rummy_client import GameClient
from rummy_engine.config import EngineConfig
from rummy_engine.engine import start_engine
from rummy_identity.testing import IdentityProcess
from rummy_infra.local import free_port

pytestmark = pytest.mark.integration


def _post(url: str, token: str, body: object) -> tuple[int, Any]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST", headers={"Authorization": f"Bearer {token}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=15) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_a_bot_sends_its_seat_s_seed_once_before_the_first_deal(
    identity: IdentityProcess, tmp_path: Path
) -> None:
    ann, bob, carl = (identity.player(f"seed-{name}") for name in ("ann", "bob", "carl"))
    seed = secrets.token_hex(32)
    calls: list[tuple[str, Any, dict[str, object]]] = [
        ("short", ann, {"seed": "ab" * 15}),
        ("odd", ann, {"seed": "a" * 33}),
        ("spaced", ann, {"seed": "ab " * 16}),  # bytes.fromhex would take it
        ("long", ann, {"seed": "cd" * 65}),
        ("good", ann, {"seed": seed}),
        ("retry", ann, {"seed": seed, "seat": 0}),
        ("other", ann, {"seed": secrets.token_hex(32)}),
        ("stranger", carl, {"seed": secrets.token_hex(32)}),
        ("not_hers", bob, {"seed": secrets.token_hex(32), "seat": 0}),
    ]

    async def scenario() -> tuple[dict[str, tuple[int, Any]], list[Any]]:
        engine = await start_engine(
            EngineConfig(
                address="127.0.0.1:0",
                data_dir=str(tmp_path / "engine"),
                identity=identity.address,
                seed_window_ms=600_000,  # no deal until both seats sent theirs: bob never does here
            )
        )
        gateway = await start_gateway(
            WebConfig(
                address=f"127.0.0.1:{free_port()}",
                engine=engine.address,
                identity=identity.address,
                cookie_secure=False,
            )
        )
        try:
            async with GameClient(engine.address, identity.operator("seed-ops").token) as operator:
                game = (await operator.create_game("rummy40", [ann.id, bob.id])).game_id
                route = f"{gateway.url}/api/v1/games/{game}/seed"
                out = {
                    name: await asyncio.to_thread(_post, route, who.token(), body)
                    for name, who, body in calls
                }
                entries = list((await operator.history(game)).entries)
        finally:
            await gateway.stop()
            await engine.stop()
        return out, entries

    out, entries = asyncio.run(scenario())
    for name, expected in {
        "short": (400, "bad_seed_length"),
        "odd": (400, "bad_seed"),
        "spaced": (400, "bad_seed"),
        "long": (400, "too_long"),
        "other": (409, "seed_already_sent"),
        "stranger": (403, "not_at_table"),
        "not_hers": (403, "not_your_seat"),
    }.items():
        status, answer = out[name]
        assert set(answer) == {"status", "code", "message"}, (name, answer)
        assert (status, answer["code"]) == expected, (name, answer)
    assert "cdcdcdcd" not in out["long"][1]["message"]
    assert out["good"][0] == 200 and out["retry"] == out["good"]
    assert out["good"][1]["view"]["deal"] == 0  # bob's seed (or the window) still awaited
    events = [entry.event for entry in entries]
    sent = [e for e in events if e.HasField("seed_contributed")]
    assert [(e.seq, e.seed_contributed.seat, e.seed_contributed.seed.hex()) for e in sent] == [
        (int(out["good"][1]["seq"]), 0, seed)
    ]
    assert events[-1] == sent[0]  # nothing after it: the refusals wrote nothing
