"""Scoring's store contract, on a real Redis and on the embedded SqliteKV: effects and tracking
together, so a replay changes nothing; the same results, ratings, boards and standings on both; records
scoring cannot apply skipped; ratings that depend on the log, not on how partitions interleave."""

from __future__ import annotations

import base64
import itertools
import json
import logging
import random
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
import redis
from google.protobuf.timestamp_pb2 import Timestamp
from rummy.game.v1 import events_pb2 as ev
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy_contracts.event_format import SCHEMA_VERSION
from rummy_scoring import handlers as handlers_module
from rummy_scoring.handlers import Handlers
from rummy_scoring.outbox import OutboxRelay
from rummy_scoring.store import ScoreReader, Store
from rummy_store import EventRecord, LogPosition
from rummy_store.embedded_log import EmbeddedEventLog
from rummy_store.publisher import EmbeddedPublisher
from rummy_store.sqlite_kv import SqliteKV

ENDED_AT = Timestamp(seconds=1_790_000_000)  # 2026-09-21 (UTC), ISO week 39


def _record(
    game_id: str, seq: int, message: ev.GameEvent, command_id: str = "c", at: Timestamp = ENDED_AT
) -> EventRecord:
    message.game_id, message.seq, message.schema_version = game_id, seq, SCHEMA_VERSION
    message.occurred_at.CopyFrom(at)
    case = message.WhichOneof("event") or ""
    return EventRecord(
        game_id, seq, command_id, case, SCHEMA_VERSION, message.SerializeToString(), LogPosition(0, seq)
    )


def _game(
    game_id: str, players: list[str], penalties: list[int], winner: int, at: Timestamp = ENDED_AT
) -> list[EventRecord]:
    """A game as the engine logs it: started and seated in one command, a draw, the end (at `at`)."""
    started = ev.GameEvent(game_started=ev.GameStarted(variant="kalooki", players=len(players)))
    seated = ev.GameEvent(
        table_seated=ev.TableSeated(player_ids=players, requested_by="matchmaking", rated=True)
    )
    drawn = ev.GameEvent(card_drawn=ev.CardDrawn(seat=0))
    deal = ev.GameEvent(deal_ended=ev.DealEnded(winner=winner, penalties=penalties))
    over = ev.GameEvent(game_ended=ev.GameEnded(winners=[winner], totals=penalties))
    return [
        _record(game_id, 1, started, "engine/create"),
        _record(game_id, 2, seated, "engine/create"),
        _record(game_id, 3, drawn),
        _record(game_id, 4, deal),
        _record(game_id, 5, over, at=at),
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


def _strip(client: Any, prefix: str) -> dict[bytes, Any]:
    """The keys under `prefix`, named without it (to compare two handlers' stores)."""
    return {key[len(prefix) :]: value for key, value in _dump(client, prefix).items()}


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


def test_live_games_are_the_games_seated_and_not_ended_newest_first_and_bounded(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    handlers, reader, _, _ = setup
    monkeypatch.setattr(handlers_module, "LIVE_KEPT", 3)
    games = {
        name: _at(_game(name, ["ann", "bob"], [0, 9], 0), Timestamp(seconds=1_790_000_000 + i))
        for i, name in enumerate(("a", "b", "c", "d", "e"))
    }
    for records in games.values():  # started, seated and a card drawn, one game after another
        handlers.on_game_records(records[:3])
    handlers.on_game_records(games["d"][3:])  # d ends
    handlers.on_game_records(games["e"][:3])  # redelivered: changes nothing
    listed = reader.live_games(10)
    assert [game_id for game_id, _, _ in listed] == ["e", "c"]  # d ended; a and b fell off (3 kept)
    _, started, state = listed[0]
    assert started == 1_790_000_004 and state.players == ("ann", "bob") and state.variant == "kalooki"
    assert [game_id for game_id, _, _ in reader.live_games(1)] == ["e"]


def _at(records: list[EventRecord], at: Timestamp) -> list[EventRecord]:
    """The records with every event at time `at`."""
    return [
        _record(r.game_id, r.seq, ev.GameEvent.FromString(r.payload), r.command_id, at=at) for r in records
    ]


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

    assert _strip(client, f"{unique_prefix}:poll:") == _strip(client, f"{unique_prefix}:one:")
    history = ScoreReader(client, f"{unique_prefix}:poll:").rating_history("kalooki", "bob")
    assert [change.games for change in history] == [1, 2]
    assert history[1].mu_before == history[0].mu_after


def test_records_scoring_cannot_apply_are_skipped_and_the_rest_of_their_poll_applied(
    setup: Setup, unique_prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    """One poll holds two good games and, between their records, six that scoring can never apply: each
    is skipped with one log line (no traceback) and counted, and the good games are scored exactly as
    without them. The poll delivered again changes nothing and skips them again (no retry loop)."""
    _, _, _, client = setup
    clean, handlers = Handlers(client, f"{unique_prefix}:clean:"), Handlers(client, f"{unique_prefix}:poll:")
    first = _game("g1", ["ann", "bob", "cy"], [0, 40, 12], 0)
    second = _game("g2", ["bob", "dee"], [9, 0], 1)
    late = ev.GameEvent(game_ended=ev.GameEnded(winners=[1], totals=[9, 0, 3]))
    bad = [
        replace(first[3], payload=b"\x00not a GameEvent"),
        replace(second[3], schema_version=SCHEMA_VERSION + 1),
        replace(first[2], event_type="card_burned"),
        replace(first[3], payload=second[3].payload),  # g2's deal under g1's headers
        _record("g3", 4, ev.GameEvent(deal_ended=ev.DealEnded(winner=0, penalties=[0, 1]))),  # not started
        _record("g1", 6, late),  # after g1's end
    ]
    bad = [replace(record, position=LogPosition(1, 100 + i)) for i, record in enumerate(bad)]
    poll = [bad[0], *first[:2], bad[1], *second[:3], bad[2], bad[3], *first[2:4], second[3], bad[4]]
    poll += [first[4], second[4], bad[5]]
    good = [record for record in poll if record not in bad]
    caplog.set_level(logging.WARNING, "rummy_scoring")
    assert handlers.on_game_records(poll) == clean.on_game_records(good) == 2 + 4 + 3
    assert handlers.game_skips.count == len(bad)
    assert _strip(client, f"{unique_prefix}:poll:") == _strip(client, f"{unique_prefix}:clean:")
    lines = [r for r in caplog.records if r.name == "rummy_scoring"]
    assert [r.getMessage().split(" skipped")[0] for r in lines] == [
        f"rummy.game.events.v1[1]@{100 + i}" for i in (0, 1, 2, 3, 4, 5)
    ]
    assert [r.getMessage().split(": ", 1)[1] for r in lines] == [
        "the payload is not a GameEvent",
        f"event format {SCHEMA_VERSION + 1}; this meldstream reads format {SCHEMA_VERSION}",
        "unknown event type 'card_burned'",
        "the payload is deal_ended seq 4 of game 'g2', not what its headers say",
        "ScoringError: game g3: deal_ended at seq 4 before game_started",
        "ScoringError: game g1: game_ended after game_ended",
    ]
    assert not any(r.exc_info for r in lines)
    assert handlers.on_game_records(poll) == 0 and handlers.game_skips.count == 2 * len(bad)
    assert _strip(client, f"{unique_prefix}:poll:") == _strip(client, f"{unique_prefix}:clean:")
    junk = EventRecord("g4", 1, "table", "table_formed", 2, b"\x00junk", LogPosition(0, 7))
    handlers.on_matchmaking_record(junk)
    assert handlers.table_skips.count == 1


def _published_ratings(client: Any, prefix: str) -> dict[tuple[str, str], tuple[int, float]]:
    """What a consumer of the scoring topic keeping each player's change with the most games (the later
    record on a tie, as matchmaking does) holds after reading the outbox in order."""
    kept: dict[tuple[str, str], tuple[int, float]] = {}
    for line in client.lrange(f"{prefix}scoring:outbox", 0, -1):
        for _, payload in json.loads(line)["events"]:
            event = sc.ScoringEvent.FromString(base64.b64decode(payload))
            if event.HasField("rating_changed"):
                change = event.rating_changed
                key = (change.variant, change.player_id)
                if change.games >= kept.get(key, (0, 0.0))[0]:
                    kept[key] = (change.games, change.ordinal)
    return kept


def test_ratings_follow_the_log_whatever_order_its_partitions_arrive_in(
    setup: Setup, unique_prefix: str
) -> None:
    """Twelve games of five players in two partitions, applied partition A then B, B then A, interleaved
    at random and in end-time order, in polls of a few records: the same ratings and rating histories
    every time, and the rating changes published leave a consumer with those ratings."""
    _, _, _, client = setup
    rng = random.Random(12)
    partitions: list[list[EventRecord]] = [[], []]
    for n in range(12):
        seated = rng.sample(["ann", "bob", "cy", "dee", "eve"], rng.choice([2, 3]))
        penalties = [0] + [rng.randrange(1, 60) for _ in seated[1:]]
        ended = Timestamp(seconds=1_790_000_000 + 60 * n)
        partitions[rng.randrange(2)] += _game(f"g{n:02d}", seated, penalties, 0, ended)
    a, b = partitions
    mixed = [list(a), list(b)]
    interleaved = []
    while any(mixed):
        interleaved.append(rng.choice([p for p in mixed if p]).pop(0))
    in_order = sorted(a + b, key=lambda r: (r.game_id, r.seq))  # game n ends before game n + 1
    feeds = {"in-order": in_order, "a-then-b": a + b, "b-then-a": b + a, "interleaved": interleaved}
    ratings = {}
    for name, records in feeds.items():
        prefix = f"{unique_prefix}:{name}:"
        handlers = Handlers(client, prefix)
        for start in range(0, len(records), 4):
            handlers.on_game_records(records[start : start + 4])
        ratings[name] = {k: v for k, v in _strip(client, prefix).items() if k.startswith(b"scoring:rating:")}
        reader = ScoreReader(client, prefix)
        assert _published_ratings(client, prefix) == {
            (variant, player): (rating.games, rating.ordinal)
            for variant, player in _published_ratings(client, prefix)
            for rating in [reader.rating(variant, player)]
        }
    assert len(ratings["in-order"]) == 10  # five players' ratings and histories
    assert ratings["a-then-b"] == ratings["in-order"]
    assert ratings["b-then-a"] == ratings["in-order"]
    assert ratings["interleaved"] == ratings["in-order"]
    history = ScoreReader(client, f"{unique_prefix}:b-then-a:").rating_history("kalooki", "ann")
    assert [change.games for change in history] == list(range(1, len(history) + 1))
    assert all(later.mu_before == earlier.mu_after for earlier, later in itertools.pairwise(history))


def test_a_forfeit_counts_as_last_place_in_the_ratings(setup: Setup, unique_prefix: str) -> None:
    """meldstream M3: ann forfeits a rated game with the fewest points; she is rated last, below cy who
    finished with the most, and the match names her as forfeited and not among the winners."""
    handlers, reader, _, client = setup
    records = _game("forfeit", ["ann", "bob", "cy"], [0, 0, 40], 1)
    forfeited = ev.GameEvent(seat_forfeited=ev.SeatForfeited(seat=0, points=5))
    records.insert(3, _record("forfeit", 4, forfeited, "engine/turn/3"))
    for seq, record in enumerate(records, 1):  # renumbered after the insert
        message = ev.GameEvent.FromString(record.payload)
        records[seq - 1] = _record("forfeit", seq, message, record.command_id)
    handlers.on_game_records(records)
    ordinal = {p: reader.rating("kalooki", p).ordinal for p in ("ann", "bob", "cy")}
    assert ordinal["bob"] > ordinal["cy"] > ordinal["ann"]
    matches = [
        event.match_scored
        for line in client.lrange(f"{unique_prefix}:scoring:outbox", 0, -1)
        for _, payload in json.loads(line)["events"]
        for event in [sc.ScoringEvent.FromString(base64.b64decode(payload))]
        if event.HasField("match_scored")
    ]
    assert [(list(m.forfeited), list(m.winners), list(m.totals)) for m in matches] == [
        (["ann"], ["bob"], [5, 0, 40])
    ]
