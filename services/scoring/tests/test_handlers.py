"""Scoring's store contract, on a real Redis and on the embedded SqliteKV: effects and tracking
together, so a replay changes nothing; the same results, ratings, boards and standings on both."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis
from google.protobuf.timestamp_pb2 import Timestamp
from rummy.game.v1 import events_pb2 as ev
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy_scoring.handlers import Handlers
from rummy_scoring.outbox import OutboxRelay
from rummy_scoring.sqlite_kv import SqliteKV
from rummy_scoring.store import ScoreReader, Store
from rummy_store import EventRecord, LogPosition
from rummy_store.embedded_log import EmbeddedEventLog
from rummy_store.publisher import EmbeddedPublisher

ENDED_AT = Timestamp(seconds=1_790_000_000)  # 2026-09-21 (UTC), ISO week 39


def _record(game_id: str, seq: int, message: ev.GameEvent, command_id: str = "c") -> EventRecord:
    message.game_id, message.seq = game_id, seq
    message.occurred_at.CopyFrom(ENDED_AT)
    case = message.WhichOneof("event") or ""
    return EventRecord(game_id, seq, command_id, case, 1, message.SerializeToString(), LogPosition(0, seq))


def _game(game_id: str, players: list[str], penalties: list[int], winner: int) -> list[EventRecord]:
    """A game as the engine logs it: started and seated in one command, a draw, the end."""
    started = ev.GameEvent(game_started=ev.GameStarted(variant="kalooki", players=len(players)))
    seated = ev.GameEvent(table_seated=ev.TableSeated(player_ids=players, requested_by="matchmaking"))
    drawn = ev.GameEvent(card_drawn=ev.CardDrawn(seat=0))
    deal = ev.GameEvent(deal_ended=ev.DealEnded(winner=winner, penalties=penalties))
    over = ev.GameEvent(game_ended=ev.GameEnded(winners=[winner], totals=penalties))
    return [
        _record(game_id, 1, started, "engine/create"),
        _record(game_id, 2, seated, "engine/create"),
        _record(game_id, 3, drawn),
        _record(game_id, 4, deal),
        _record(game_id, 5, over),
    ]


def _dump(client: Any, prefix: str) -> dict[bytes, Any]:
    out: dict[bytes, Any] = {}
    for key in client.scan_iter(f"{prefix}*"):
        kind = client.type(key)
        reader = {
            b"string": client.get,
            b"list": lambda k: client.lrange(k, 0, -1),
            b"hash": client.hgetall,
            b"zset": lambda k: client.zrange(k, 0, -1, withscores=True),
            b"set": client.smembers,
        }[kind]
        out[key] = reader(key)
    return out


Setup = tuple[Handlers, ScoreReader, EmbeddedEventLog, Store]


@pytest.fixture(params=[pytest.param("redis", marks=pytest.mark.integration), "sqlite"])
def setup(request: pytest.FixtureRequest, unique_prefix: str) -> Iterator[Setup]:
    client: Store
    if request.param == "redis":
        client = redis.Redis.from_url(request.getfixturevalue("redis_url"))
    else:
        client = SqliteKV(":memory:")
    published = EmbeddedEventLog(":memory:")
    prefix = f"{unique_prefix}:"
    yield (
        Handlers(client, prefix),
        ScoreReader(client, prefix),
        published,
        client,
    )
    published.close()
    client.close()


def test_a_game_is_scored_once_however_often_it_is_delivered(setup: Setup, unique_prefix: str) -> None:
    handlers, reader, published, client = setup
    records = _game("g1", ["ann", "bob", "cy"], [0, 40, 12], 0)
    assert [handlers.on_game_records([r]) for r in records] == [0, 0, 0, 1, 4]  # hand; match + 3 ratings
    before = _dump(client, unique_prefix)
    assert [handlers.on_game_records([r]) for r in records] == [0, 0, 0, 0, 0]  # redelivered: tracked
    assert handlers.on_game_records(records) == 0  # the topic again from the beginning, in one poll
    assert _dump(client, unique_prefix) == before
    assert published.last_seq("g1") == 0  # in the outbox, committed with the effects ...
    relay = OutboxRelay(client, handlers.keys.outbox(), EmbeddedPublisher(published))
    assert relay.drain_once() == 2 and relay.drain_once() == 0  # ... then published, once
    assert published.last_seq("g1") == 5
    match = reader.match("g1")
    assert match is not None and list(match.winners) == ["ann"]
    assert reader.leaderboard("kalooki", "all", 0, 10) == ([("ann", 1.0)], 1)
    assert reader.leaderboard("kalooki", "week:2026-W39", 0, 10)[1] == 1
    assert reader.rating("kalooki", "ann").ordinal > reader.rating("kalooki", "cy").ordinal
    assert reader.rating("kalooki", "cy").ordinal > reader.rating("kalooki", "bob").ordinal
    assert [c.games for c in reader.rating_history("kalooki", "bob")] == [1]


def test_tournament_standings_count_a_game_once_whichever_topic_arrives_first(
    setup: Setup,
) -> None:
    handlers, reader, _, _ = setup

    def formed(game_id: str) -> EventRecord:
        table = mm.TableFormed(game_id=game_id, variant="kalooki", tournament_id="T")
        payload = mm.MatchmakingEvent(game_id=game_id, table_formed=table).SerializeToString()
        return EventRecord(game_id, 1, "table", "table_formed", 1, payload, LogPosition(0, 0))

    handlers.on_matchmaking_record(formed("a"))  # the table first, then the game
    handlers.on_game_records(_game("a", ["ann", "bob", "cy"], [0, 40, 12], 0))
    handlers.on_game_records(_game("b", ["ann", "bob", "cy"], [5, 0, 7], 1))  # the game, then the table
    handlers.on_matchmaking_record(formed("b"))
    handlers.on_matchmaking_record(formed("b"))  # redelivered
    assert reader.standings("T") == [("ann", 5, 2), ("cy", 19, 2), ("bob", 40, 2)]


def test_a_poll_spanning_game_ends_and_redeliveries_scores_as_one_record_at_a_time(
    setup: Setup, unique_prefix: str
) -> None:
    """One poll holds a redelivered prefix, the end of a game, and a whole game with a shared player:
    the same results, ratings (the second game rates from the first's), outbox and tracking as records
    applied one by one."""
    _, _, _, client = setup
    one, batched = Handlers(client, f"{unique_prefix}:one:"), Handlers(client, f"{unique_prefix}:poll:")
    first = _game("g1", ["ann", "bob", "cy"], [0, 40, 12], 0)
    second = _game("g2", ["bob", "dee"], [9, 0], 1)
    for record in first + second:
        one.on_game_records([record])
    assert batched.on_game_records(first[:3]) == 0
    poll = [*first[1:3], second[0], first[3], second[1], first[4], *second[2:]]  # partitions interleave
    assert batched.on_game_records(poll) == 2 + 4 + 3  # two hands; two matches, 3 + 2 ratings
    assert batched.on_game_records(first + second) == 0  # redelivered whole: tracked

    def strip(prefix: str) -> dict[bytes, Any]:
        return {key[len(prefix) :]: value for key, value in _dump(client, prefix).items()}

    assert strip(f"{unique_prefix}:poll:") == strip(f"{unique_prefix}:one:")
    history = ScoreReader(client, f"{unique_prefix}:poll:").rating_history("kalooki", "bob")
    assert [change.games for change in history] == [1, 2]
    assert history[1].mu_before == history[0].mu_after
