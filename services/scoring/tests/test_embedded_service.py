"""Scoring as a service on the embedded default (no Kafka, no Redis): it follows the engine's sqlite
log, answers queries from SqliteKV, publishes to its own sqlite log, and refuses bad queries."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import grpc
from meldstream_benches.scoring import appends
from rummy.game.v1 import events_pb2 as ev
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy.scoring.v1 import scoring_pb2_grpc as sc_grpc
from rummy_scoring.config import ScoringConfig
from rummy_scoring.service import start_scoring
from rummy_store.embedded_log import EmbeddedEventLog


def _append_game(log: EmbeddedEventLog, game_id: str, *, ended: bool = True) -> None:
    """A kalooki game as the engine logs it: started and seated, the deal's end, the game's end (or,
    not `ended`, only started and seated: a game being played)."""
    commands = [
        (
            "engine/create",
            [
                ev.GameEvent(game_started=ev.GameStarted(variant="kalooki", players=3)),
                ev.GameEvent(
                    table_seated=ev.TableSeated(
                        player_ids=["ann", "bob", "cy"], requested_by="matchmaking", rated=True
                    )
                ),
            ],
        ),
        (
            "out",
            [
                ev.GameEvent(deal_ended=ev.DealEnded(winner=1, penalties=[30, 0, 12])),
                ev.GameEvent(game_ended=ev.GameEnded(winners=[1], totals=[30, 0, 12])),
            ],
        ),
    ]
    seq = 0
    for command, batch in appends(game_id, commands if ended else commands[:1]):
        log.append(game_id, command, seq, batch)
        seq += len(batch)


async def _code(call: Any) -> str:
    try:
        await call
    except grpc.aio.AioRpcError as error:
        return f"{error.code().name} {(error.details() or '').split(':')[0]}"
    return "OK"


async def _scenario(tmp_path: Path) -> tuple[sc.MatchScored, list[str], int, int, list[str]]:
    config = ScoringConfig(
        address="127.0.0.1:0",
        data_dir=str(tmp_path / "scoring"),
        game_file=str(tmp_path / "engine" / "events.sqlite"),
        tables_file=str(tmp_path / "matchmaking" / "tables.sqlite"),
    )
    assert config.embedded
    scoring = await start_scoring(config)
    games = EmbeddedEventLog(config.game_file)
    try:
        _append_game(games, "g1")
        _append_game(games, "g2", ended=False)
        async with grpc.aio.insecure_channel(scoring.address) as channel:
            stub: Any = sc_grpc.ScoringServiceStub(channel)
            for _ in range(200):  # the consumer loop follows the engine's log
                try:
                    reply = await stub.GetMatchResult(sc.GetMatchResultRequest(game_id="g1"))
                    if reply.HasField("match"):
                        break
                except grpc.aio.AioRpcError as error:
                    assert error.code() == grpc.StatusCode.NOT_FOUND
                await asyncio.sleep(0.05)
            codes = [
                await _code(stub.GetMatchResult(sc.GetMatchResultRequest())),
                await _code(stub.GetMatchResult(sc.GetMatchResultRequest(game_id="nope"))),
                await _code(stub.GetLeaderboard(sc.GetLeaderboardRequest(variant="kalooki", period="month"))),
                await _code(stub.GetLeaderboard(sc.GetLeaderboardRequest(variant="kalooki", limit=500))),
                await _code(stub.GetRatingHistory(sc.GetRatingHistoryRequest(player_id="ann"))),
                await _code(stub.ListLiveGames(sc.ListLiveGamesRequest(limit=101))),
            ]
            for _ in range(200):
                live = await stub.ListLiveGames(sc.ListLiveGamesRequest())
                if live.games:
                    break
                await asyncio.sleep(0.05)
            board = await stub.GetLeaderboard(sc.GetLeaderboardRequest(variant="kalooki"))
            history = await stub.GetRatingHistory(
                sc.GetRatingHistoryRequest(player_id="bob", variant="kalooki")
            )
        for _ in range(100):  # the outbox relay moves the results to scoring's own log
            if scoring.relay.sent:
                break
            await asyncio.sleep(0.05)
        published = EmbeddedEventLog(tmp_path / "scoring" / "scores.sqlite").last_seq("g1")
        assert [(e.player_id, e.wins) for e in board.entries] == [("bob", 1.0)]
        listed = [f"{g.game_id} {g.variant} {' '.join(g.player_ids)}" for g in live.games]
        return reply.match, codes, len(history.changes), published, listed
    finally:
        games.close()
        await scoring.stop()


def test_scoring_runs_on_the_embedded_store(tmp_path: Path) -> None:
    match, codes, rated, published, live = asyncio.run(_scenario(tmp_path))
    assert list(match.player_ids) == ["ann", "bob", "cy"] and list(match.winners) == ["bob"]
    assert list(match.totals) == [30, 0, 12]
    assert codes == [
        "INVALID_ARGUMENT missing_game_id",
        "NOT_FOUND no_result",
        "INVALID_ARGUMENT bad_period",
        "INVALID_ARGUMENT bad_limit",
        "INVALID_ARGUMENT missing_variant",
        "INVALID_ARGUMENT bad_limit",
    ]
    assert live == ["g2 kalooki ann bob cy"]  # g1 ended
    assert rated == 1 and published == 5  # a hand, the match and three rating changes
