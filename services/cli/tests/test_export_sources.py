"""One replay export, two sources: `meldstream replay --format json` reads the operator's store, the web
gateway's /api/games/GAME/export asks the engine's GetHistory (with the caller's token). For the same
finished game both are the same document (the gateway's says the refusals stream is not in the API),
for every hand and for one seat's view; the engine decides who may have it."""

from __future__ import annotations

import asyncio
import json
import os
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from meldstream_cli.reading import game_steps
from meldstream_web.config import WebConfig
from meldstream_web.export import game_export
from meldstream_web.server import start_gateway
from rummy_client import GameClient
from rummy_client.bots import BotPlayer
from rummy_identity.testing import IdentityProcess, Player
from rummy_infra.local import free_port
from rummy_infra.serving import ServiceProcess
from rummy_store.embedded_log import EmbeddedEventLog

PLAYERS = ["ex-ann", "ex-bob"]
API_NOTE = "; refused commands are on the operator's record only (meldstream replay)"


@pytest.fixture(scope="module")
def engine(
    tmp_path_factory: pytest.TempPathFactory, identity: IdentityProcess
) -> Iterator[tuple[ServiceProcess, Path]]:
    data = tmp_path_factory.mktemp("export") / "store"
    address = f"127.0.0.1:{free_port()}"
    env = {
        **os.environ,
        **identity.service_env("engine"),
        "ENGINE_ADDRESS": address,
        "ENGINE_DATA_DIR": str(data),
    }
    process = ServiceProcess("rummy_engine", env, address, data.parent / "engine.log")
    process.start()
    yield process, data
    process.stop()


async def _game(address: str, players: list[Player], operator: Player) -> None:
    """A rummy500 game played to its end by the bots (its spread pile and credits in every state); an
    operator creates the table of the two players."""
    clients = [GameClient(address, p.token) for p in players]
    try:
        async with GameClient(address, operator.token) as ops:
            ids = [p.id for p in players]
            await ops.create_game("rummy500", ids, "g", options={"target_score": 100})
        await asyncio.gather(*(BotPlayer(c, "g", seat).play() for seat, c in enumerate(clients)))
    finally:
        for client in clients:
            await client.close()


def _get(url: str, token: str) -> tuple[int, Any]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


async def _from_the_gateway(engine: str, identity: IdentityProcess) -> list[tuple[int, Any]]:
    config = WebConfig(address=f"127.0.0.1:{free_port()}", engine=engine, identity=identity.address)
    gateway = await start_gateway(config)
    ann, bob, zed = (identity.player(name) for name in (*PLAYERS, "ex-zed"))
    try:
        export = f"{gateway.url}/api/games/g/export"
        calls = [
            (export, bob.token()),
            (f"{export}?seat=1", ann.token()),
            (export, zed.token()),  # not at the table
            (f"{export}?seat=5", ann.token()),
        ]
        return [await asyncio.to_thread(_get, url, token) for url, token in calls]
    finally:
        await gateway.stop()


def test_the_store_and_the_api_give_the_same_export(
    engine: tuple[ServiceProcess, Path], identity: IdentityProcess
) -> None:
    process, data = engine
    asyncio.run(_game(process.address, [identity.player(p) for p in PLAYERS], identity.operator()))
    whole, seat, stranger, no_seat = asyncio.run(_from_the_gateway(process.address, identity))
    with EmbeddedEventLog(data / "events.sqlite") as log:
        stored = game_export("g", game_steps(log, "g"), seat=None, operator=False)
        stored_seat = game_export("g", game_steps(log, "g"), seat=1, operator=False)
    assert stored is not None and stored_seat is not None and stored["finished"]
    assert whole[0] == 200, whole
    assert whole[1] == {**stored, "shown": stored["shown"] + API_NOTE}
    assert seat[0] == 200 and seat[1] == {**stored_seat, "shown": stored_seat["shown"] + API_NOTE}
    assert [h is None for h in seat[1]["events"][-1]["state"]["hands"]] == [True, False]  # bob's only
    assert stranger[0] == 403 and stranger[1]["code"] == "not_at_table"
    assert no_seat[0] == 400 and "no seat 5" in no_seat[1]["message"]
