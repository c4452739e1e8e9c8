"""Scoring as three processes in one consumer group on Kafka + Redis, one SIGKILLed mid-stream.

A stream of finished games goes to the game topic (the records the engine writes: created and seated,
a draw, the deal's end, the game's end), some of them tournament tables on matchmaking's topic, before
or after their games. The players are few enough that most games share a player with games in other
partitions, so instances rate the same players at once. The instance started first (which took the
outbox's lease) is killed while games still arrive: its partitions move, its relay's lease runs out.

Every result counts once: what the survivors' store answers (results, ratings with their histories,
leaderboards, payouts, standings) equals what one scoring instance computes alone from the same records,
and the scoring topic holds each game's result once, a copy being the same record (key, seq, payload),
with each player's latest rating change (by games played) the final rating.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest
import redis
from google.protobuf.timestamp_pb2 import Timestamp
from rummy.game.v1 import events_pb2 as ev
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy_contracts.event_format import SCHEMA_VERSION
from rummy_infra.local import free_port
from rummy_infra.serving import ServiceProcess
from rummy_scoring.handlers import Handlers, periods
from rummy_scoring.store import ScoreReader
from rummy_store import EventRecord, NewEvent
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.publisher import KafkaPublisher

PARTITIONS = 6
GAMES = 150
PLAYERS = [f"p{n:02d}" for n in range(20)]
TOURNAMENTS = ["cup-a", "cup-b"]
START = 1_790_000_000  # GameEnded times: one second apart, in the order the games are written


class Game:
    """One finished kalooki game as the engine logs it, and its tournament, if any."""

    def __init__(self, n: int, rng: random.Random) -> None:
        self.id = f"game-{n:03d}"
        self.players = rng.sample(PLAYERS, rng.randint(2, 4))
        self.tournament = TOURNAMENTS[n % 2] if n % 5 == 0 else ""
        winner = rng.randrange(len(self.players))
        self.penalties = [0 if seat == winner else rng.randint(5, 80) for seat in range(len(self.players))]
        self.winner = winner
        self.ended = Timestamp(seconds=START + n)

    def commands(self) -> list[tuple[str, str, int, list[NewEvent]]]:
        started = ev.GameEvent(game_started=ev.GameStarted(variant="kalooki", players=len(self.players)))
        seated = ev.GameEvent(
            table_seated=ev.TableSeated(player_ids=self.players, requested_by="matchmaking", rated=True)
        )
        drawn = ev.GameEvent(card_drawn=ev.CardDrawn(seat=0))
        deal = ev.GameEvent(deal_ended=ev.DealEnded(winner=self.winner, penalties=self.penalties))
        over = ev.GameEvent(game_ended=ev.GameEnded(winners=[self.winner], totals=self.penalties))
        events = [started, seated, drawn, deal, over]
        for seq, event in enumerate(events, 1):
            event.game_id, event.seq, event.schema_version = self.id, seq, SCHEMA_VERSION
            event.occurred_at.CopyFrom(self.ended)
        new = [NewEvent(e.WhichOneof("event") or "", e.SerializeToString(), SCHEMA_VERSION) for e in events]
        return [
            (self.id, "engine/create", 1, new[:2]),
            (self.id, "draw", 3, new[2:3]),
            (self.id, "discard", 4, new[3:]),
        ]

    def table(self) -> tuple[str, str, int, list[NewEvent]]:
        formed = mm.TableFormed(
            game_id=self.id, variant="kalooki", player_ids=self.players, tournament_id=self.tournament
        )
        payload = mm.MatchmakingEvent(table_formed=formed).SerializeToString()
        return self.id, f"table/{self.id}", 1, [NewEvent("table_formed", payload)]


def _until(condition: Callable[[], bool], what: str, limit_s: float) -> float:
    """Wait for `condition`; returns how long it took."""
    start = time.monotonic()
    while not condition():
        assert time.monotonic() - start < limit_s, f"{what}: not within {limit_s:.0f} s"
        time.sleep(0.1)
    return time.monotonic() - start


def _records(bootstrap: str, topic: str) -> list[EventRecord]:
    log = KafkaEventLog(bootstrap, topic, PARTITIONS)
    try:
        return [r for p in range(PARTITIONS) for r in log.read_partition(p)]
    finally:
        log.close()


def _answers(reader: ScoreReader, games: list[Game], boards: set[str]) -> dict[str, object]:
    """Everything the scoring API answers about these games, in comparable form."""
    out: dict[str, object] = {}
    for game in games:
        state = reader.state(game.id)
        out[f"seq {game.id}"] = state.seq if state else None
        out[f"hands {game.id}"] = reader.hands(game.id)
        out[f"match {game.id}"] = reader.match(game.id)
    for player in PLAYERS:
        out[f"rating {player}"] = reader.rating("kalooki", player)
        out[f"history {player}"] = reader.rating_history("kalooki", player)
        out[f"payouts {player}"] = sorted(reader.payouts(player))  # appended in arrival order
    for period in boards:
        out[f"board {period}"] = reader.leaderboard("kalooki", period, 0, 100)
    for tournament in TOURNAMENTS:
        out[f"standings {tournament}"] = reader.standings(tournament)
    return out


@pytest.mark.integration
def test_three_scoring_instances_count_every_result_once_through_a_sigkill(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str, tmp_path: Path
) -> None:
    topics = {
        "ENGINE_TOPIC": f"{unique_prefix}.rummy.game.events.v1",
        "MATCHMAKING_TOPIC": f"{unique_prefix}.rummy.matchmaking.events.v1",
        "SCORING_TOPIC": f"{unique_prefix}.rummy.scoring.events.v1",
    }
    prefix = f"{unique_prefix}:"
    env = {
        **os.environ,
        **topics,
        "KAFKA_BOOTSTRAP": kafka_bootstrap,
        "REDIS_URL": redis_url,
        "SCORING_KEY_PREFIX": prefix,
        "SCORING_GROUP": f"{unique_prefix}.scoring",
        "SCORING_PARTITIONS": str(PARTITIONS),
    }
    rng = random.Random(13)
    games = [Game(n, rng) for n in range(GAMES)]
    client = redis.Redis.from_url(redis_url)
    reader = ScoreReader(client, prefix)
    game_log = KafkaPublisher(kafka_bootstrap, topics["ENGINE_TOPIC"], PARTITIONS)
    table_log = KafkaPublisher(kafka_bootstrap, topics["MATCHMAKING_TOPIC"], PARTITIONS)

    def scoring(name: str) -> ServiceProcess:
        address = f"127.0.0.1:{free_port()}"
        return ServiceProcess("rummy_scoring", {**env, "SCORING_ADDRESS": address}, address, tmp_path / name)

    instances = [scoring(f"scoring-{n}.log") for n in range(3)]
    written = 0

    def write() -> None:  # ~20 games a second; a tournament table before its game or after it
        nonlocal written
        for n, game in enumerate(games):
            table_first = game.tournament and n % 10 == 0
            if table_first:
                table_log.publish(*game.table())
            game_log.publish_all(game.commands())
            if game.tournament and not table_first:
                table_log.publish(*game.table())
            written += 1
            time.sleep(0.05)

    figures: dict[str, float] = {}
    try:
        for instance in instances:
            instance.start(90)  # the first one holds the outbox's lease from its start
        writer = threading.Thread(target=write)
        writer.start()
        _until(lambda: written >= GAMES // 3, "a third of the games written", 60)
        _until(lambda: reader.match(games[0].id) is not None, "a first result", 60)
        instances[0].kill()
        killed_at = time.monotonic()
        writer.join(60)
        assert written == GAMES

        def scored() -> bool:  # every game, and every tournament game in its standings
            if not all((s := reader.state(g.id)) is not None and s.seq == 5 for g in games):
                return False
            counted = sum(int(client.scard(reader.keys.tournament_games(t))) for t in TOURNAMENTS)
            return counted == sum(1 for g in games if g.tournament)

        _until(scored, "every game scored", 60)
        figures["SIGKILL to every game scored (s)"] = time.monotonic() - killed_at
        outbox = f"{prefix}scoring:outbox"
        _until(lambda: client.llen(outbox) == 0, "the outbox published", 30)
        figures["SIGKILL to the outbox published (s)"] = time.monotonic() - killed_at
    finally:
        for instance in instances:
            instance.stop()
        game_log.close()
        table_log.close()

    # One instance alone, in this process, from the same records: the reference.
    alone = Handlers(client, f"{prefix}alone:")
    for record in _records(kafka_bootstrap, topics["MATCHMAKING_TOPIC"]):
        alone.on_matchmaking_record(record)
    by_partition: dict[int, list[EventRecord]] = defaultdict(list)
    for record in _records(kafka_bootstrap, topics["ENGINE_TOPIC"]):
        by_partition[record.position.partition].append(record)
    for partition in sorted(by_partition):
        alone.on_game_records(by_partition[partition])
    boards = {period for g in games for period in periods(g.ended.ToDatetime(tzinfo=dt.UTC))}
    assert _answers(reader, games, boards) == _answers(ScoreReader(client, f"{prefix}alone:"), games, boards)
    assert all(reader.match(g.id) is not None for g in games)
    assert sum(n for _, n, _ in reader.standings(TOURNAMENTS[0])) > 0

    # The scoring topic: each (game, seq) once or as identical copies; one result and one hand a game.
    published: dict[tuple[str, int], bytes] = {}
    copies = 0
    for record in _records(kafka_bootstrap, topics["SCORING_TOPIC"]):
        key = (record.game_id, record.seq)
        if key in published:
            assert published[key] == record.payload, f"{key} published twice with different payloads"
            copies += 1
        published[key] = record.payload
    events = [sc.ScoringEvent.FromString(payload) for payload in published.values()]
    for case in ("match_scored", "hand_scored"):
        counted = sorted(e.game_id for e in events if e.WhichOneof("event") == case)
        assert counted == sorted(g.id for g in games), case
    latest: dict[str, sc.RatingChanged] = {}
    for event in events:  # as matchmaking folds them: the change with the most games wins
        change = event.rating_changed
        if event.HasField("rating_changed") and change.games >= latest.get(change.player_id, change).games:
            latest[change.player_id] = change
    for player, change in latest.items():
        rating = reader.rating("kalooki", player)
        assert (change.mu_after, change.sigma_after, change.games) == (rating.mu, rating.sigma, rating.games)
    assert set(latest) == {p for g in games for p in g.players}
    figures["scoring records, copies sent again"] = copies
    figures["distinct scoring records"] = len(published)
    print()
    for name, value in figures.items():
        print(f"{name}: {value:.1f}" if isinstance(value, float) else f"{name}: {value}")
