"""`meldstream run --demo` on the embedded default shows the whole flow (queue, table, play, result,
ratings, leaderboard), then `meldstream replay` and `meldstream verify` work on what it played."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import redis
from meldstream_cli.main import main
from rummy.game.v1 import game_service_pb2 as gs
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy_client import GameClient
from rummy_client.identity import IdentityClient
from rummy_contracts.house import house_bots
from rummy_identity.testing import PASSWORD
from rummy_infra.local import free_port
from rummy_store import NewEvent
from rummy_store.embedded_log import EmbeddedEventLog

from .demo_run import demo_output


def test_run_demo_then_replay_and_verify_a_finished_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "store"
    address = f"127.0.0.1:{free_port()}"
    out = demo_output(["--data-dir", str(data)], os.environ, engine_address=address)
    assert (
        out.startswith("meldstream identity listening on ")
        and f"\nmeldstream engine listening on {address}\n" in out
    )
    assert "round 1: 3 tickets for kalooki: demo-ada +0.00, demo-ben +0.00, demo-cleo +0.00" in out, out
    table = re.search(r"table (\S+): demo-ada, demo-ben, demo-cleo", out)
    match = re.search(r"game (\S+) over after (\d+) events \(kalooki, 1 deals scored\)", out)
    assert table and match and match.group(1) == table.group(1), out
    game, events = match.group(1), int(match.group(2))
    totals = r"totals demo-ada (\d+), demo-ben (\d+), demo-cleo (\d+)"
    result = re.search(rf"result: +winner ([\w-]+); {totals}", out)
    assert (
        result
        and dict(zip(("demo-ada", "demo-ben", "demo-cleo"), result.groups()[1:], strict=True))[
            result.group(1)
        ]
        == "0"
    )
    assert re.search(rf"ratings: .*{result.group(1)} \+0\.00 -> \+\d", out), out  # the winner's rating rose
    assert f"kalooki leaderboard (wins, all time): 1. {result.group(1)} (1)" in out

    assert main(["verify", game, "--data-dir", str(data)]) == 0
    assert "verified" in capsys.readouterr().out
    assert main(["replay", game, "--data-dir", str(data), "--to", "3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"game {game}: kalooki, 3 players: 0 demo-ada, 1 demo-ben, 2 demo-cleo\n"), out
    assert (
        re.search(r"^seq 1 +[\d:.]+  A game of Kalooki for 3 players began", out, re.M)
        and "\nseq 3 " in out
        and "\nseq 4" not in out
    )
    assert "discard:" in out
    assert main(["replay", game, "--data-dir", str(data)]) == 0
    assert re.search(rf"^seq {events} +[\d:.]+  Game over: ", capsys.readouterr().out, re.M)
    assert main(["verify", "no-such-game", "--data-dir", str(data)]) == 1
    # `meldstream replay GAME | head`: the reader gone, it stops quietly with 141 as `cat` would
    command = [sys.executable, "-m", "meldstream_cli.main", "replay", game, "--data-dir", str(data)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as replay:
        assert replay.stdout is not None
        replay.stdout.close()  # before its imports are done: its first write finds no reader
        _, stderr = replay.communicate(timeout=60)
    assert (replay.returncode, stderr) == (141, b"")


def test_kafka_without_redis_is_refused_with_how_to_set_both(monkeypatch: pytest.MonkeyPatch) -> None:
    # No server is reached: the check comes before any store is opened.
    for name in ("KAFKA_BOOTSTRAP", "REDIS_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(SystemExit) as flags:
        main(["verify", "g", "--kafka", "127.0.0.1:9"])
    assert str(flags.value) == (
        "meldstream verify: set both --kafka and --redis (or KAFKA_BOOTSTRAP and REDIS_URL), "
        "or neither (the embedded store)"
    )
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:9/0")
    with pytest.raises(SystemExit) as env:
        main(["replay", "g"])
    assert (
        str(env.value)
        == "meldstream replay: set both KAFKA_BOOTSTRAP and REDIS_URL, or neither (the embedded store)"
    )


def test_run_refuses_an_older_matchmaking_journal_and_leaves_nothing_running(tmp_path: Path) -> None:
    """A new engine store beside matchmaking's journal of before its format (header default 1)."""
    (tmp_path / "matchmaking").mkdir()
    table = mm.MatchmakingEvent(game_id="g", table_formed=mm.TableFormed(game_id="g", variant="kalooki"))
    with EmbeddedEventLog(tmp_path / "matchmaking" / "tables.sqlite", 3) as log:
        log.append("g", "table", 0, [NewEvent("table_formed", table.SerializeToString())])
    command = [sys.executable, "-m", "meldstream_cli.main", "run", "--data-dir", str(tmp_path / "engine")]
    env = {
        **os.environ,
        "ENGINE_ADDRESS": f"127.0.0.1:{free_port()}",
        "IDENTITY_ADDRESS": f"127.0.0.1:{free_port()}",
    }
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    last = done.stderr.strip().splitlines()[-1]  # after the engine's development-key warning
    assert last.startswith(f"meldstream run: matchmaking journal {tmp_path.resolve()}/matchmaking/")
    assert "older meldstream (matchmaking journal format 1; this one reads format 2)" in last
    assert not (tmp_path / "scoring").exists()  # refused before scoring started


@pytest.mark.integration
def test_run_with_two_engines_serves_every_game_from_the_first_address(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str
) -> None:
    address = f"127.0.0.1:{free_port()}"
    command = [sys.executable, "-m", "meldstream_cli.main", "run", "--engines", "2"]
    env = {
        **os.environ,
        "KAFKA_BOOTSTRAP": kafka_bootstrap,
        "REDIS_URL": redis_url,
        "ENGINE_ADDRESS": address,
        "ENGINE_TOPIC": f"{unique_prefix}.rummy.game.events.v1",
        "ENGINE_KEY_PREFIX": f"{unique_prefix}:engine:",
        "ENGINE_TURN_TIMEOUT_MS": "0",
        "MATCHMAKING_ADDRESS": f"127.0.0.1:{free_port()}",
        "MATCHMAKING_TOPIC": f"{unique_prefix}.rummy.matchmaking.events.v1",
        "SCORING_ADDRESS": f"127.0.0.1:{free_port()}",
        "SCORING_TOPIC": f"{unique_prefix}.rummy.scoring.events.v1",
        "SCORING_KEY_PREFIX": f"{unique_prefix}:scoring:",
        "SCORING_GROUP": f"{unique_prefix}.scoring",
        "ENGINE_SEED_KEY": f"{unique_prefix}-seed-key",
        "IDENTITY_KEY_SECRET": f"{unique_prefix}-identity-key-secret",
        "MATCHMAKING_FORWARD_SECRET": f"{unique_prefix}-matchmaking-forward-secret",
        "IDENTITY_ADDRESS": f"127.0.0.1:{free_port()}",
    }
    with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        try:
            engines: list[str] = []
            for line in proc.stdout:
                if line.startswith("meldstream engine listening on"):
                    engines.append(line.split()[4])
                if len(engines) == 2:
                    break
            assert address in engines and len(set(engines)) == 2
            games = [f"two-{n}" for n in range(9)]
            played = asyncio.run(_play_one_move_in_each(address, env["IDENTITY_ADDRESS"], games))
            assert played == 9
            client = redis.Redis.from_url(redis_url, decode_responses=True)
            owners = client.hvals(f"{unique_prefix}:engine:owners:{env['ENGINE_TOPIC']}")
            client.close()
            assert set(owners) == set(engines)  # both own partitions
        finally:
            proc.send_signal(signal.SIGINT)
            assert proc.wait(60) == 0


async def _play_one_move_in_each(address: str, identity: str, games: list[str]) -> int:
    """Ann (signed up at the run's identity) creates each game, herself and a house bot, and draws
    for its first seat (hers or the bot's, which her client plays), through the first engine only."""
    accounts = IdentityClient(identity)
    try:
        session = accounts.sign_up("ann", PASSWORD, device="tests")
        async with GameClient(address, accounts.session_token(session)) as ann:
            for game_id in games:
                players = [session.account.account_id, *house_bots(2)]
                created = await ann.create_game("rummy40", players, game_id)
                turn = created.view.turn
                await ann.submit(game_id, turn, gs.Action(draw_from_stock=gs.DrawFromStock()))
    finally:
        accounts.close()
    return len(games)
