"""End to end: the engine as a process on real Kafka and Redis with a seed window. Both seats play
through the SDK, which sends a random seed of each seat's own before the first deal: the deal comes at
once (not at the window's end), the log holds both seeds before it, and both `VerifyShuffle` and
`meldstream verify` on the topic, on the replay export and on GetHistory's JSON check the game's every
shuffle against the mixed seed; an export with a seat's seed changed does not verify."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.protobuf import json_format
from meldstream_cli.main import main
from meldstream_web.export import history_export
from rummy.game.v1 import game_service_pb2 as gs
from rummy_client import GameClient
from rummy_client.bots import BotPlayer
from rummy_engine.seeds import game_seed
from rummy_identity.testing import IdentityProcess
from rummy_infra.local import free_port
from rummy_infra.serving import ServiceProcess
from rummy_rules.game import mixed_seed

WINDOW_MS = 60_000  # far longer than the test: the deal must come from the seeds, not the timer


@pytest.fixture
def engine(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str, tmp_path: Path, identity: IdentityProcess
) -> Iterator[tuple[ServiceProcess, dict[str, str]]]:
    """The engine process and its environment (where its store is, its seed key)."""
    env = {
        **os.environ,
        "KAFKA_BOOTSTRAP": kafka_bootstrap,
        "REDIS_URL": redis_url,
        "ENGINE_TOPIC": f"{unique_prefix}.rummy.game.events.v1",
        "ENGINE_KEY_PREFIX": f"{unique_prefix}:",
        "ENGINE_ADDRESS": f"127.0.0.1:{free_port()}",
        "ENGINE_TURN_TIMEOUT_MS": "0",
        "ENGINE_SEED_KEY": f"{unique_prefix}-seed-key",
        "ENGINE_SEED_WINDOW_MS": str(WINDOW_MS),
        **identity.service_env(),
    }
    process = ServiceProcess("rummy_engine", env, env["ENGINE_ADDRESS"], tmp_path / "engine.log")
    process.start()
    yield process, env
    process.stop()


@pytest.mark.integration
def test_two_seats_seeds_deal_the_game_and_it_verifies(
    engine: tuple[ServiceProcess, dict[str, str]],
    identity: IdentityProcess,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    process, env = engine
    players = [identity.player("seed-ann"), identity.player("seed-bob")]
    game_id = "seeded"

    async def play() -> tuple[float, gs.GetHistoryResponse, gs.VerifyShuffleResponse]:
        clients = [GameClient(process.address, p.token, retry_for_s=60) for p in players]
        operator = GameClient(process.address, identity.operator().token, retry_for_s=60)
        created = await operator.create_game(
            "rummy40", [p.id for p in players], game_id, options={"deals_per_match": 1}
        )
        assert (created.view.deal, created.view.phase) == (0, gs.PHASE_DEAL_OVER)
        began = time.monotonic()
        await asyncio.gather(*(BotPlayer(c, game_id, seat).play() for seat, c in enumerate(clients)))
        played = time.monotonic() - began
        history, checked = await operator.history(game_id), await operator.verify_shuffle(game_id)
        for client in (*clients, operator):
            await client.close()
        return played, history, checked

    played, history, checked = asyncio.run(play())
    assert played < WINDOW_MS / 1000  # dealt when the second seed came, not when the window closed
    kinds = [entry.event.WhichOneof("event") for entry in history.entries]
    assert kinds[:5] == [
        "game_started",
        "table_seated",
        "seed_contributed",
        "seed_contributed",
        "deal_started",
    ]
    sent = {e.event.seed_contributed.seat: e.event.seed_contributed.seed for e in history.entries[2:4]}
    seats = (sent[0], sent[1])
    assert all(len(seed) == 32 for seed in seats) and seats[0] != seats[1]  # the SDK's random seeds
    server = game_seed(env["ENGINE_SEED_KEY"], game_id)
    assert checked.verified and checked.seed == server and tuple(checked.seat_seeds) == seats
    assert checked.shuffle_seed == mixed_seed(server, seats) != server

    store = ["--kafka", env["KAFKA_BOOTSTRAP"], "--redis", env["REDIS_URL"], "--topic", env["ENGINE_TOPIC"]]
    assert main(["verify", game_id, *store]) == 0
    out = capsys.readouterr().out
    assert f"seat 0 seed     {seats[0].hex()}" in out and f"seat 1 seed     {seats[1].hex()}" in out
    assert f"shuffle seed    {checked.shuffle_seed.hex()}" in out and out.rstrip().endswith("verified")

    export, history_json = tmp_path / "export.json", tmp_path / "history.json"
    doc = history_export(game_id, history, seat=None)
    export.write_text(json.dumps(doc))
    history_json.write_text(json_format.MessageToJson(history))
    for path in (export, history_json):
        assert main(["verify", "--file", str(path)]) == 0
        assert capsys.readouterr().out.rstrip().endswith("verified")
    sent_event = next(e for e in doc["events"] if e["type"] == "seed_contributed")
    assert sent_event["event"]["seed"] in (seats[0].hex(), seats[1].hex())  # hex, as verify prints it
    sent_event["event"]["seed"] = "00" * 32  # another seed for that seat: another deal
    export.write_text(json.dumps(doc))
    assert main(["verify", "--file", str(export)]) == 1
    assert "DOES NOT MATCH" in capsys.readouterr().out
