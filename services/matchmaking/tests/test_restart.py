"""A matchmaking restart mid-queue and mid-tournament loses nothing and seats nobody twice.

The first instance queues six tickets for tables of four (one table forms, two wait), cancels one,
and runs a contract rotation into its second round; a second instance on the same topic must come
back with the same tickets, seats and tournament, and keep going from there. On the embedded log
and on Kafka.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy_matchmaking.app import MatchmakingApp
from rummy_matchmaking.config import MatchmakingConfig
from rummy_matchmaking.pairing import PairingRules
from rummy_matchmaking.service import open_journal, start_matchmaking
from rummy_service.auth import HUMAN, PLAY, WATCH, Principal
from rummy_service.errors import FailedPrecondition
from rummy_store import NewEvent
from rummy_store.embedded_log import EmbeddedEventLog
from rummy_store.publisher import EmbeddedPublisher, KafkaPublisher, Publisher

FOURS = mm.EnqueueRequest(variant="kalooki", min_players=4, max_players=4)
ONLY_FULL_TABLES = {"kalooki": PairingRules(base_window=1e9, fill_after_s=1e9)}


async def _until(check: Callable[[], bool], what: str) -> None:
    for _ in range(300):
        if check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def _player(name: str) -> Principal:
    return Principal(name, frozenset({PLAY, WATCH}), HUMAN, name)


def _tickets(app: MatchmakingApp) -> dict[str, tuple[int, str, dict[str, int]]]:
    return {tid: (s.state, s.game_id, s.seats) for tid, s in app.tickets.items()}


def _tables(app: MatchmakingApp, tournament_id: str) -> list[tuple[int, int, tuple[str, ...]]]:
    return [(t.round, t.number, t.players) for t in app.tournament(tournament_id).tables]


def _formed(config: MatchmakingConfig) -> tuple[Counter[str], Counter[str]]:
    """How often each game and each ticket appears in a TableFormed on the topic."""
    games: Counter[str] = Counter()
    tickets: Counter[str] = Counter()
    with open_journal(config) as log:
        for partition in range(log.partitions):
            for record in log.read_partition(partition):
                if record.event_type == "table_formed":
                    table = mm.MatchmakingEvent.FromString(record.payload).table_formed
                    games[table.game_id] += 1
                    tickets.update(table.ticket_ids)
    return games, tickets


def _publish_result(results: Publisher, game_id: str, players: tuple[str, ...]) -> None:
    """What scoring publishes when a table's round ends: its first player closed."""
    penalties = [0] + [25] * (len(players) - 1)
    match = sc.MatchScored(
        variant="contract",
        player_ids=players,
        totals=penalties,
        winners=[players[0]],
        closer=players[0],
        last_deal_penalties=penalties,
        deals=1,
    )
    event = sc.ScoringEvent(game_id=game_id, match_scored=match)
    results.publish(game_id, "scored", 1, [NewEvent("match_scored", event.SerializeToString())])


async def _scenario(config: MatchmakingConfig, results: Publisher) -> None:
    first = await start_matchmaking(config)
    app = first.app
    ids = {f"q{i}": (await app.enqueue(_player(f"q{i}"), FOURS)).ticket.ticket_id for i in range(6)}
    await _until(lambda: app.tables_formed == 1, "the first table")
    await app.cancel(_player("q5"), ids["q5"])
    tournament = await app.create_tournament(
        mm.CreateTournamentRequest(
            variant="contract", format=mm.TOURNAMENT_FORMAT_ROTATION, rounds=3, seed=b"restart"
        )
    )
    tid = tournament.tournament_id
    for i in range(8):
        await app.register(_player(f"c{i}"), tid)
    for table in await app.start_tournament(tid):
        await asyncio.to_thread(_publish_result, results, table.game_id, table.players)
    await _until(lambda: app.tournament(tid).round == 2, "the second round")
    tickets, tables = _tickets(app), _tables(app, tid)
    await first.stop()

    second = await start_matchmaking(config)
    again = second.app
    try:
        assert _tickets(again) == tickets  # queued, seated (same game, same seats) and cancelled
        assert [state for state, _, _ in tickets.values()].count(mm.TICKET_STATE_QUEUED) == 1
        await _until(lambda: again.tournament(tid).round == 2, "the results to replay")
        assert _tables(again, tid) == tables and again.tournament(tid).players == [f"c{i}" for i in range(8)]
        with pytest.raises(FailedPrecondition, match="already_queued"):
            await again.enqueue(_player("q4"), FOURS)  # still queued: not twice
        with pytest.raises(FailedPrecondition, match="tournament_started"):
            await again.register(_player("c0"), tid)
        for name in ("n1", "n2", "n3"):
            await again.enqueue(_player(name), FOURS)
        await _until(lambda: again.tickets[ids["q4"]].state == mm.TICKET_STATE_SEATED, "q4 seated")
        assert again.tickets[ids["q5"]].state == mm.TICKET_STATE_CANCELLED
    finally:
        await second.stop()
    games, seated = _formed(config)
    assert set(games.values()) == {1}  # no table published twice, tournament rounds included
    assert len(games) == 2 + 2 * 2  # two queue tables, two rounds of two tournament tables
    assert set(seated.values()) == {1} and len(seated) == 8  # q0-q4 and n1-n3, each once


def test_restart_on_the_embedded_log(tmp_path: Path) -> None:
    scores = tmp_path / "scoring" / "scores.sqlite"
    config = MatchmakingConfig(
        address="127.0.0.1:0",
        data_dir=str(tmp_path / "matchmaking"),
        scoring_file=str(scores),
        pairing_interval_ms=20,
        pairing=ONLY_FULL_TABLES,
    )
    scores.parent.mkdir()
    results = EmbeddedPublisher(EmbeddedEventLog(scores))
    try:
        asyncio.run(_scenario(config, results))
    finally:
        results.close()


@pytest.mark.integration
def test_restart_on_kafka(kafka_bootstrap: str, unique_prefix: str) -> None:
    config = MatchmakingConfig(
        address="127.0.0.1:0",
        kafka=kafka_bootstrap,
        topic=f"{unique_prefix}.rummy.matchmaking.events.v1",
        scoring_topic=f"{unique_prefix}.rummy.scoring.events.v1",
        pairing_interval_ms=20,
        pairing=ONLY_FULL_TABLES,
    )
    results = KafkaPublisher(kafka_bootstrap, config.scoring_topic, config.partitions)
    try:
        asyncio.run(_scenario(config, results))
    finally:
        results.close()
