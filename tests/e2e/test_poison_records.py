"""Stray records in a game's partition (valid headers, a payload that does not parse or an unknown event
format) are skipped and reported by the engine and the CLI; nothing else stops.

Issue 12 found that one such record made every call about its game answer UNKNOWN, stopped the resume
of open games after a restart (the games behind it kept no turn timer), and made `meldstream replay`
and `verify` crash. Here a raw producer writes them between the records of a finished game and of a
live one, before and during play. Then the games' calls succeed, a restarted engine resumes the open
games with their timers, and the CLI replays and verifies every game, saying what it skipped.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import time
from pathlib import Path

import pytest
from kafka import KafkaProducer
from meldstream_cli.main import main
from rummy.game.v1 import game_service_pb2 as gs
from rummy_client import GameClient
from rummy_contracts.event_format import SCHEMA_VERSION, envelope, event_type
from rummy_contracts.facts import TableSeated
from rummy_identity.testing import IdentityProcess, Player
from rummy_infra.local import free_port
from rummy_infra.serving import ServiceProcess
from rummy_rules import bots
from rummy_rules.simulate import simulate
from rummy_store import NewEvent
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.kafka_records import headers
from rummy_store.partitioning import partition_for

GARBAGE = b"\xff\xfe not a GameEvent"
STRAY_FORMAT = 99


def _in_partition(partition: int, stem: str) -> str:
    """A game id of that partition (all the games here share one, with the stray records)."""
    return next(g for n in range(1000) if partition_for(g := f"{stem}-{n}", 3) == partition)


class Stray:
    """A producer that is not the engine: writes records with the log's headers into a game's stream."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self._topic = topic
        self._producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")

    def write(self, game_id: str, seq: int, payload: bytes, schema_version: int = SCHEMA_VERSION) -> None:
        event = NewEvent("card_drawn", payload, schema_version)
        self._producer.send(
            self._topic,
            key=game_id.encode(),
            value=payload,
            partition=partition_for(game_id, 3),
            headers=headers(event, seq, f"stray/{seq}/{schema_version}"),
        ).get(timeout=30)

    def close(self) -> None:
        self._producer.close()


def _write_finished_game(
    log: KafkaEventLog, stray: Stray, game_id: str, players: list[str], poison_at: int
) -> int:
    """A complete rummy40 game of `players` (account ids) as the engine logs one, appended through a
    writer of the topic (before the engine owns it); with `poison_at`, two stray records come just
    before the game's record of that seq: a garbage payload at that seq, then that record's own
    payload in an unknown event format at the seq after. Returns the game's last seq."""
    seed = hashlib.sha256(game_id.encode()).digest()
    game = simulate("rummy40", 2, seed, bots.greedy, options={"deals_per_match": 1})
    assert game.finished
    seated = TableSeated(tuple(players), 0, (("deals_per_match", 1),), "test")
    logged = [game.events[0], seated, *game.events[1:]]
    for seq, event in enumerate(logged, start=1):
        payload = envelope(game_id, seq, f"c{seq}", event, time.time()).SerializeToString()
        if seq == poison_at:
            stray.write(game_id, seq, GARBAGE)
            stray.write(game_id, seq + 1, payload, STRAY_FORMAT)
        log.append(game_id, f"c{seq}", seq - 1, [NewEvent(event_type(event), payload, SCHEMA_VERSION)])
    return len(logged)


async def _move(clients: list[GameClient], game_id: str) -> gs.SubmitActionResponse:
    """The next move of whoever is to play (`clients`: one a seat): draw, or discard the first card."""
    view = await clients[0].view(game_id)
    player = clients[view.turn]
    if view.phase == gs.PHASE_DRAW:
        action = gs.Action(draw_from_stock=gs.DrawFromStock())
    else:
        seated = await player.view(game_id, view.turn)
        action = gs.Action(discard=gs.Discard(card=seated.hand[0]))
    return await player.submit(game_id, view.turn, action)


async def _timer_plays(client: GameClient, game_id: str) -> None:
    """Returns once the game moves on its own (the engine's turn timer plays the absent seat)."""
    began, seq = time.monotonic(), (await client.view(game_id)).seq
    while (await client.view(game_id)).seq == seq:
        assert time.monotonic() - began < 20, f"the turn timer of {game_id} did not play"
        await asyncio.sleep(0.2)


def _cli(capsys: pytest.CaptureFixture[str], command: str, game_id: str, where: list[str]) -> tuple[int, str]:
    code = main([command, game_id, *where])
    return code, capsys.readouterr().out


@pytest.mark.integration
def test_stray_records_are_skipped_by_the_engine_and_the_cli(
    kafka_bootstrap: str,
    redis_url: str,
    unique_prefix: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    *,
    identity: IdentityProcess,
) -> None:
    players = [identity.player("ann"), identity.player("bob")]
    ids = [p.id for p in players]
    ops = identity.operator()
    topic = f"{unique_prefix}.rummy.game.events.v1"
    partition = partition_for("live", 3)
    live, clean = _in_partition(partition, "live"), _in_partition(partition, "timed")
    finished, poisoned = _in_partition(partition, "done"), _in_partition(partition, "done-stray")
    stray = Stray(kafka_bootstrap, topic)
    with KafkaEventLog(kafka_bootstrap, topic, 3, writer=True) as log:
        finished_last = _write_finished_game(log, stray, finished, ids, poison_at=0)
        poisoned_last = _write_finished_game(log, stray, poisoned, ids, poison_at=21)

    address = f"127.0.0.1:{free_port()}"
    env = {
        **os.environ,
        "KAFKA_BOOTSTRAP": kafka_bootstrap,
        "REDIS_URL": redis_url,
        "ENGINE_TOPIC": topic,
        "ENGINE_KEY_PREFIX": f"{unique_prefix}:",
        "ENGINE_ADDRESS": address,
        "ENGINE_TURN_TIMEOUT_MS": "300",  # the clean live game is played by its turn timer
        **identity.service_env(),
    }
    engine = ServiceProcess("rummy_engine", env, address, tmp_path / "engine.log")
    engine.start(90)

    def seats(who: list[Player]) -> list[GameClient]:
        return [GameClient(address, p.token, retry_for_s=30) for p in who]

    async def before_restart() -> None:
        clients = seats(players)
        ann = clients[0]
        async with GameClient(address, ops.token, retry_for_s=30) as operator:  # seats other people
            await operator.create_game("rummy40", ids, live, turn_timeout_ms=600_000)  # moved by this test
            await operator.create_game("rummy40", ids, clean)
        for _ in range(2):
            await _move(clients, live)
        head = (await ann.view(live)).seq
        stray.write(live, head + 1, GARBAGE)  # where the game's next record goes, before it
        stray.write(live, head + 2, b"", STRAY_FORMAT)
        answer = await _move(clients, live)
        assert answer.first_seq == head + 1
        stray.write(live, answer.last_seq + 1, GARBAGE)  # and after the game's last record
        # Every game of the partition answers; the finished ones are loaded from the log, strays skipped.
        await _timer_plays(ann, clean)
        assert (await ann.state_at(clean, 2)).view.seq == 2
        for game_id, last in ((finished, finished_last), (poisoned, poisoned_last)):
            view = await ann.view(game_id)
            assert (view.seq, view.phase) == (last, gs.PHASE_GAME_OVER)
            history = await ann.history(game_id)  # its strays left out, as the fold leaves them
            assert [e.event.seq for e in history.entries] == list(range(1, last + 1))
            assert (await ann.verify_shuffle(game_id)).commitment_matches
        for client in clients:
            await client.close()

    async def after_restart() -> None:
        clients = seats(players)
        ann = clients[0]
        await _timer_plays(ann, clean)  # resumed with the game
        head = (await ann.view(live)).seq
        answer = await _move(clients, live)
        assert answer.first_seq > head
        for client in clients:
            await client.close()

    try:
        asyncio.run(before_restart())
        engine.stop()
        engine.start(90)
        asyncio.run(after_restart())
    finally:
        engine.stop()
        stray.close()
    text = (tmp_path / "engine.log").read_text()
    assert "Traceback" not in text, text[-3000:]
    assert f"skipped record {topic}[{partition}]@" in text

    where = ["--kafka", kafka_bootstrap, "--redis", redis_url, "--topic", topic]
    code, out = _cli(capsys, "replay", finished, where)
    assert (
        code == 0
        and "SKIPPED" not in out
        and re.search(rf"^seq {finished_last} +[\d:.]+  Game over: ", out, re.M)
    )
    code, out = _cli(capsys, "verify", finished, where)
    assert code == 0 and out.splitlines()[-1] == "verified", out
    code, out = _cli(capsys, "replay", poisoned, where)
    skips = [line for line in out.splitlines() if "SKIPPED" in line]
    assert code == 0 and re.search(rf"^seq {poisoned_last} +[\d:.]+  Game over: ", out, re.M), out
    assert len(skips) == 2 and "seq 21: SKIPPED" in skips[0] and "cannot apply" in skips[0]
    assert "seq 22: SKIPPED" in skips[1] and f"event format {STRAY_FORMAT}" in skips[1]
    code, out = _cli(capsys, "verify", poisoned, where)
    assert code == 0 and out.count("SKIPPED") == 2 and out.splitlines()[-1] == "verified", out
    code, out = _cli(capsys, "replay", live, where)
    assert code == 0 and out.count("SKIPPED") == 3, out
