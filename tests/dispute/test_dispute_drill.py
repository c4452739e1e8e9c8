"""The dispute drill (issue 16): a game with a refused move, a timeout and an away period, on an engine
process, is replayed and exported; each of them is found, with its time, in the summary, the JSON
export and the HTML page, also from a read-only copy of the store. A finished game's export and its
GetHistory answer verify without the store, and a tampered deck does not."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from meldstream_cli.main import main
from rummy.game.v1 import game_service_pb2 as gs
from rummy_client import GameClient, RpcFailure
from rummy_client.bots import BotPlayer
from rummy_identity.testing import IdentityProcess, Player
from rummy_infra.local import free_port
from rummy_infra.serving import ServiceProcess

NAMES = ["ann", "bob", "cy"]  # the tables' three players; "zed" holds no seat, "ops" seats them
DEFAULT_LIMIT_MS = 45_000  # the engine's default turn limit here; the drill's table asks for 800 ms
TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"


@pytest.fixture(scope="module")
def accounts(identity: IdentityProcess) -> dict[str, Player]:
    return {name: identity.player(f"drill-{name}") for name in (*NAMES, "zed")} | {"ops": identity.operator()}


@pytest.fixture(scope="module")
def players(accounts: dict[str, Player]) -> list[str]:
    """The seated players' ids, in seat order."""
    return [accounts[name].id for name in NAMES]


@pytest.fixture(scope="module")
def store(
    tmp_path_factory: pytest.TempPathFactory, identity: IdentityProcess
) -> Iterator[tuple[ServiceProcess, Path]]:
    data = tmp_path_factory.mktemp("drill") / "store"
    address = f"127.0.0.1:{free_port()}"
    env = {
        **os.environ,
        "ENGINE_ADDRESS": address,
        "ENGINE_DATA_DIR": str(data),
        "ENGINE_TURN_TIMEOUT_MS": str(DEFAULT_LIMIT_MS),
        "ENGINE_AWAY_AFTER": "1",  # the first timeout marks the seat away
        **identity.service_env(),
    }
    engine = ServiceProcess("rummy_engine", env, address, data.parent / "engine.log")
    engine.start()
    yield engine, data
    engine.stop()


async def _wait(what: str, check: Any, timeout_s: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = await check()
        if found:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"no {what} within {timeout_s} s")


async def _create(address: str, accounts: dict[str, Player], game_id: str, **table: Any) -> None:
    """The operator seats the three players at a casual kalooki table."""
    async with GameClient(address, accounts["ops"].token) as operator:
        await operator.create_game("kalooki", [accounts[name].id for name in NAMES], game_id, **table)


def _clients(address: str, accounts: dict[str, Player]) -> list[GameClient]:
    return [GameClient(address, accounts[name].token) for name in NAMES]


async def _drill(address: str, accounts: dict[str, Player]) -> tuple[int, str, str]:
    """A refused discard, then the seat's turn runs out (timed out, marked away), then it returns."""
    await _create(address, accounts, "drill", turn_timeout_ms=800)
    clients = _clients(address, accounts)
    try:
        view = await clients[0].view("drill", 0)
        seat = view.turn
        own = await clients[seat].view("drill", seat)
        discard = gs.Action(discard=gs.Discard(card=own.hand[0]))
        with pytest.raises(RpcFailure) as refused:
            await clients[seat].submit("drill", seat, discard, "refused-1")
        assert refused.value.code == "must_draw_first"

        async def away() -> bool:
            seats = (await clients[seat].view("drill", seat)).seats
            return seats[seat].away

        await _wait("timeout", away)
        await clients[seat].return_to_table("drill", seat)
        return seat, accounts[NAMES[seat]].id, refused.value.details
    finally:
        for client in clients:
            await client.close()


def _replay(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["replay", *args]) == 0
    return capsys.readouterr().out


def test_a_refusal_a_timeout_and_an_away_period_are_on_record(
    store: tuple[ServiceProcess, Path],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    accounts: dict[str, Player],
) -> None:
    engine, data = store
    seat, player, details = asyncio.run(_drill(engine.address, accounts))
    where = ["--data-dir", str(data)]

    text = _replay(capsys, "drill", *where)
    summary = text.split("\n\n")[0]
    assert "the game is not over: hands and the stock are hidden (--operator shows them)" in summary
    assert "turn limit: 800 ms in force (the table asked for 800)" in summary
    assert re.search(
        rf"^  seq (\d+) at ({TIME}): seat {seat} \({player}\) timed out after 800 ms \(1 in a row\)$",
        summary,
        re.M,
    ), summary
    assert re.search(
        rf"^  seat {seat} \({player}\): away from seq \d+ at {TIME}, back at seq \d+ at {TIME}$",
        summary,
        re.M,
    ), summary
    assert re.search(
        rf"^  at {TIME} \(after seq 2\): seat {seat} \({player}\) '{player}' sent discard .*"
        rf"\(command 'refused-1'\): REFUSED must_draw_first: ",
        summary,
        re.M,
    ), summary
    assert details.split(": ", 1)[1] in summary  # the message the player was given
    assert re.search(r"^seq \d+ +[\d:.]+  \w+'s time ran out: auto-(draw|discard)", text, re.M), text
    assert re.search(rf"^refused  [\d:.]+ at {TIME} \(after seq 2\)", text, re.M)  # beside the events
    assert "(hidden)" in text and "OPERATOR VIEW" not in text

    export = json.loads(_replay(capsys, "drill", *where, "--format", "json", "--operator"))
    assert export["format"] == "meldstream.replay/1" and not export["finished"]
    assert export["shown"].startswith("OPERATOR VIEW of an unfinished game")
    assert all(hand is not None for hand in export["events"][-1]["state"]["hands"])
    s = export["summary"]
    # The table's 800 ms limit goes on timing out the seats after the drill: the drilled seat's come first.
    timeout, period = s["timeouts"][0], s["away_periods"][0]
    (refusal,) = export["refused"]
    assert (timeout["seat"], timeout["player"], timeout["limit_ms"], timeout["away"]) == (
        seat,
        player,
        800,
        False,
    )
    assert (
        period["seat"],
        period["from"]["seq"] > timeout["seq"],
        period["to"]["seq"] > period["from"]["seq"],
    ) == (
        seat,
        True,
        True,
    )
    assert (refusal["seat"], refusal["player"], refusal["code"], refusal["after_seq"]) == (
        seat,
        player,
        "must_draw_first",
        2,
    )
    assert list(refusal["action"]) == ["discard"]
    times = [timeout["time"], period["from"]["time"], period["to"]["time"], refusal["time"]]
    assert all(re.fullmatch(TIME, t) for t in times)
    assert refusal["time"] <= timeout["time"] <= period["to"]["time"]  # the order it happened in
    by_seq = {e["seq"]: e for e in export["events"]}
    assert (
        by_seq[timeout["seq"]]["type"] == "turn_timed_out"
        and by_seq[timeout["seq"]]["time"] == timeout["time"]
    )
    assert by_seq[timeout["seq"] + 2]["by_engine"]  # after TurnTimedOut and PlayerAway: the engine's move
    assert s["turn_limit_ms"] == 800 and s["turn_limit_in_force_ms"] == 800

    page_file = tmp_path / "drill.html"
    _replay(capsys, "drill", *where, "--html", str(page_file))
    page = page_file.read_text()
    assert (
        page.startswith("<!DOCTYPE html>")
        and "<script src" not in page
        and "://" not in page.split("<script")[0]  # no address: the page reads nothing from a network
    )
    for item in (timeout["time"], period["from"]["time"], period["to"]["time"], refusal["time"]):
        assert item in page
    assert "REFUSED must_draw_first" in page and "timed out after 800 ms" in page
    embedded = re.search(r'<script type="application/json" id="export">(.*?)</script>', page, re.S)
    assert embedded and json.loads(embedded.group(1))["summary"]["timeouts"][0] == timeout
    assert 'id="back"' in page and 'id="forward"' in page

    # One seat's view and a range of events: the other hands stay hidden, the summary is the whole game's.
    seat_view = _replay(capsys, "drill", *where, "--seat", str(seat), "--from", "3", "--to", "4")
    assert (
        f"shown: seat {seat}'s view" in seat_view
        and "\nseq 2 " not in seat_view
        and "\nseq 5 " not in seat_view
    )
    assert re.search(r"^seq 3 ", seat_view, re.M) and "\ntimeouts: " in seat_view


def test_the_limit_in_force_is_recorded_when_the_table_asks_for_the_default(
    store: tuple[ServiceProcess, Path], capsys: pytest.CaptureFixture[str], accounts: dict[str, Player]
) -> None:
    engine, data = store
    asyncio.run(_create(engine.address, accounts, "default-limit"))
    export = json.loads(_replay(capsys, "default-limit", "--data-dir", str(data), "--format", "json"))
    assert (export["summary"]["turn_limit_ms"], export["summary"]["turn_limit_in_force_ms"]) == (
        0,
        DEFAULT_LIMIT_MS,
    )


def _read_only_replay(data: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`meldstream` on a copy of the store that cannot be written, as a mounted backup: a read-only bind
    mount in a private mount namespace as root (who may write any file), read-only files otherwise."""
    copy = tmp_path / "backup"
    copy.mkdir(parents=True)
    for name in ("events.sqlite", "events.sqlite-wal", "refusals.sqlite", "refusals.sqlite-wal"):
        if (data / name).exists():  # the engine runs on: a backup of its files as they are now
            shutil.copyfile(data / name, copy / name)
    command = [sys.executable, "-m", "meldstream_cli.main", *args, "--data-dir", str(copy)]
    if os.geteuid() == 0:
        script = 'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" && exec "$@"'
        command = ["unshare", "--mount", "sh", "-c", script, str(copy), *command]
    else:
        for path in (*copy.iterdir(), copy):
            path.chmod(0o555 if path.is_dir() else 0o444)
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def test_replay_and_verify_read_a_read_only_copy_of_the_store(
    store: tuple[ServiceProcess, Path], finished: str, tmp_path: Path
) -> None:
    data = store[1]
    replayed = _read_only_replay(data, tmp_path, "replay", "drill")
    assert replayed.returncode == 0 and "Traceback" not in replayed.stderr, replayed.stderr
    assert "read-only: reading a private copy" in replayed.stderr
    assert "REFUSED must_draw_first" in replayed.stdout
    assert re.search(rf"^  seq 3 at {TIME}: seat \d \(\w+\) timed out after 800 ms", replayed.stdout, re.M)
    verified = _read_only_replay(data, tmp_path / "v", "verify", finished)
    assert verified.returncode == 0 and verified.stdout.splitlines()[-1] == "verified", verified.stderr


@pytest.fixture(scope="module")
def finished(store: tuple[ServiceProcess, Path], accounts: dict[str, Player]) -> str:
    """A kalooki game played to the end by the bots."""

    async def play() -> str:
        await _create(store[0].address, accounts, "finished")
        clients = _clients(store[0].address, accounts)
        try:
            await asyncio.gather(*(BotPlayer(c, "finished", seat).play() for seat, c in enumerate(clients)))
        finally:
            for client in clients:
                await client.close()
        return "finished"

    return asyncio.run(play())


def test_a_player_verifies_the_export_and_get_history_without_the_store(
    store: tuple[ServiceProcess, Path],
    finished: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    accounts: dict[str, Player],
) -> None:
    engine, data = store
    game = finished
    export_file = tmp_path / "export.json"
    export_file.write_text(_replay(capsys, game, "--data-dir", str(data), "--format", "json"))

    async def history() -> gs.GetHistoryResponse:
        async with GameClient(engine.address, accounts["bob"].token) as client:
            return await client.history(game)

    history_file = tmp_path / "history.json"
    history_file.write_text(json_format.MessageToJson(asyncio.run(history())))
    for path in (export_file, history_file):
        assert main(["verify", "--file", str(path)]) == 0
        out = capsys.readouterr().out
        assert out.splitlines()[-1] == "verified" and "deal 1" in out

    doc = json.loads(export_file.read_text())
    deck = doc["events"][0]["event"]["deck"]
    # Two cards dealt to the same hand swapped (positions 0 and 3 of three seats): the game replays
    # the same, but the deck is not the one the seed gives.
    other = 3 if deck[3] != deck[0] else 6
    deck[0], deck[other] = deck[other], deck[0]
    export_file.write_text(json.dumps(doc))
    assert main(["verify", "--file", str(export_file)]) == 1
    assert "deal 1          seq 1     DOES NOT MATCH" in capsys.readouterr().out


async def _other_refusals(address: str, accounts: dict[str, Player]) -> int:
    """A seated player's moves refused for other reasons than the rules', and a stranger's attempt;
    the seat that sent the seated player's refusals."""
    await _create(address, accounts, "others", turn_timeout_ms=600_000)
    clients = {name: GameClient(address, accounts[name].token) for name in [*NAMES, "zed"]}
    try:
        turn = (await clients["ann"].view("others")).turn
        other = (turn + 1) % len(NAMES)
        sender = clients[NAMES[turn]]
        draw = gs.Action(draw_from_stock=gs.DrawFromStock())
        for seat, action, command_id, code in (
            (other, draw, "not-mine", "not_your_seat"),  # another seat's move
            (turn, gs.Action(), "empty", "malformed_action"),  # no action at all
        ):
            with pytest.raises(RpcFailure) as refused:
                await sender.submit("others", seat, action, command_id)
            assert refused.value.code == code
        with pytest.raises(RpcFailure) as stranger:  # holds no seat: refused, and not on the game's record
            await clients["zed"].submit("others", turn, draw, "stranger")
        assert stranger.value.code == "not_your_seat"
        return turn
    finally:
        for client in clients.values():
            await client.close()


def test_refusals_other_than_the_rules_are_on_record_for_the_games_players_only(
    store: tuple[ServiceProcess, Path],
    capsys: pytest.CaptureFixture[str],
    accounts: dict[str, Player],
    players: list[str],
) -> None:
    engine, data = store
    turn = asyncio.run(_other_refusals(engine.address, accounts))
    export = json.loads(_replay(capsys, "others", "--data-dir", str(data), "--format", "json"))
    assert [(r["player"], r["seat"], r["command_id"], r["code"]) for r in export["refused"]] == [
        (players[turn], (turn + 1) % len(players), "not-mine", "not_your_seat"),
        (players[turn], turn, "empty", "malformed_action"),
    ]
