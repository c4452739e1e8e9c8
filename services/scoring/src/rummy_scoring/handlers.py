"""Idempotent handlers: a poll's effects and tracking records are written in one Redis MULTI/EXEC.

A game's events arrive in order (one partition per game), so a game's tracking record is the last seq
applied: a redelivered or replayed event with `seq <= tracked` changes nothing. A consumer poll is one
batch: each game's state is read once (WATCH + MGET), its events are folded in memory in log order, and
every effect, tracking record and outbox line of the poll commits together, so a poll costs a handful of
round trips however many records and games it holds (per record it was ~3, ~9 at a game's end). The
scoring events a record causes go into the outbox in the same transaction (`outbox.py` publishes them).

A record scoring can never apply (an unknown event type, another event format, a payload that is not
what its headers say, an event out of its game's sequence) is skipped with one log line and counted:
retrying it would stop every game of every partition behind it, and it would fail again.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import redis
from google.protobuf.message import DecodeError
from rummy.game.v1 import events_pb2 as ev
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy_store import EventRecord
from rummy_store.event_log import TOPIC

from rummy_scoring.config import MATCHMAKING_TOPIC
from rummy_scoring.outbox import entry
from rummy_scoring.ratings import Rating, rate
from rummy_scoring.results import GameScore, ScoringError, ranks, read, step
from rummy_scoring.store import Keys, Store, rating_of

log = logging.getLogger("rummy_scoring")
Write = tuple[str, tuple[Any, ...], dict[str, Any]]  # a Redis command queued after MULTI
Skip = tuple[EventRecord, str]  # a record passed over for good, and why


def periods(ended_at: dt.datetime) -> list[str]:
    """Leaderboard periods a game counts in, by its end time (UTC): all time, its day, its ISO week."""
    year, week, _ = ended_at.isocalendar()
    return ["all", f"day:{ended_at:%Y-%m-%d}", f"week:{year}-W{week:02d}"]


@dataclass(frozen=True, slots=True)
class _Scored:
    """A record that caused scoring events: its game's score after it, and the events."""

    record: EventRecord
    envelope: ev.GameEvent
    state: GameScore
    outputs: list[sc.ScoringEvent]


@dataclass(slots=True)
class _Reads:
    """What the effects of a poll's finished games depend on, read after WATCHing it."""

    ratings: dict[str, Rating]  # by rating key; updated in log order as the poll's games are rated
    tournaments: dict[str, str]  # game id -> tournament id
    counted: set[str]  # game ids already in their tournament's standings


@dataclass(slots=True)
class Skips:
    """The records of a topic a consumer passed over for good: one log line each, and a count."""

    topic: str
    count: int = field(default=0, init=False)

    def note(self, record: EventRecord, reason: str) -> None:
        self.count += 1
        at = record.position
        log.warning(
            "%s[%d]@%d skipped (game %s, seq %d): %s",
            *(self.topic, at.partition, at.offset, record.game_id, record.seq, reason),
        )


class Handlers:
    """The scoring effects of game events and of TableFormed (tournament membership)."""

    def __init__(
        self, client: Store, prefix: str, game_topic: str = TOPIC, tables_topic: str = MATCHMAKING_TOPIC
    ) -> None:
        self._r: Any = client  # redis-py's stubs type replies as a union; these keys hold bytes
        self.keys = Keys(prefix)
        self.game_skips = Skips(game_topic)
        self.table_skips = Skips(tables_topic)

    def on_game_records(self, records: Sequence[EventRecord]) -> int:
        """Apply a poll of game-event records; returns the number of scoring events put in the outbox."""
        readable: list[tuple[EventRecord, ev.GameEvent]] = []
        skipped: list[Skip] = []
        for record in records:
            try:
                envelope = read(record)
            except ScoringError as exc:
                skipped.append((record, str(exc)))
                continue
            if envelope is not None:
                readable.append((record, envelope))
        count, unusable = self._transaction(readable) if readable else (0, [])
        for record, reason in skipped + unusable:  # after the commit: a poll retried is noted once
            self.game_skips.note(record, reason)
        return count

    def _transaction(self, readable: list[tuple[EventRecord, ev.GameEvent]]) -> tuple[int, list[Skip]]:
        while True:
            with self._r.pipeline() as pipe:
                try:
                    return self._apply(pipe, readable)
                except redis.WatchError:
                    continue

    def _apply(self, pipe: Any, readable: list[tuple[EventRecord, ev.GameEvent]]) -> tuple[int, list[Skip]]:
        games = list(dict.fromkeys(r.game_id for r, _ in readable))
        state_keys = [self.keys.game(game_id) for game_id in games]
        pipe.watch(*state_keys)
        before = {
            game_id: GameScore.loads(raw) if raw is not None else None
            for game_id, raw in zip(games, pipe.mget(state_keys), strict=True)
        }
        states = dict(before)
        scored: list[_Scored] = []
        unusable: list[Skip] = []
        for record, envelope in readable:
            state = states[record.game_id]
            if state is not None and record.seq <= state.seq:
                continue  # tracked: counted before
            try:
                new, outputs = step(state, record.seq, envelope)
            except Exception as exc:  # step is pure: what it refuses now it refuses on every retry
                unusable.append((record, f"{type(exc).__name__}: {exc}"))
                continue
            states[record.game_id] = new
            if outputs:
                scored.append(_Scored(record, envelope, new, outputs))
        reads = self._read_for(pipe, [s for s in scored if s.outputs[0].HasField("match_scored")])
        published = {game_id: state.published for game_id, state in states.items() if state is not None}
        writes: list[Write] = []
        count = 0
        for item in scored:
            outputs = item.outputs + self._effects(item, reads, writes)
            game_id, seq = item.record.game_id, item.record.seq
            line = entry(game_id, f"{game_id}/{seq}", published[game_id] + 1, outputs)
            writes.append(_w("rpush", self.keys.outbox(), line))
            published[game_id] += len(outputs)
            count += len(outputs)
        pipe.multi()
        _apply(pipe, writes)
        for game_id, key in zip(games, state_keys, strict=True):
            state = states[game_id]
            if state is not None and state is not before[game_id]:
                pipe.set(key, GameScore.dumps(replace(state, published=published[game_id])))
        pipe.execute()
        return count, unusable

    def _read_for(self, pipe: Any, ended: list[_Scored]) -> _Reads:
        """WATCH and read the ratings, tournament links and standings the finished games touch."""
        reads = _Reads({}, {}, set())
        if not ended:
            return reads
        keys = self.keys
        rating_keys = list(
            dict.fromkeys(keys.rating(s.state.variant, p) for s in ended for p in s.state.players)
        )
        link_keys = [keys.game_tournament(s.record.game_id) for s in ended]
        pipe.watch(*rating_keys, *link_keys)
        # Read on a second connection, in one round trip: EXEC fails if a watched key changes before it,
        # so what these reads saw still holds when the writes commit.
        replies = self._read([("hgetall", key) for key in rating_keys] + [("get", key) for key in link_keys])
        ratings = replies[: len(rating_keys)]
        reads.ratings = {key: rating_of(raw) for key, raw in zip(rating_keys, ratings, strict=True)}
        for item, raw in zip(ended, replies[len(rating_keys) :], strict=True):
            if raw is not None:
                reads.tournaments[item.record.game_id] = raw.decode()
        if reads.tournaments:
            pairs = list(reads.tournaments.items())
            pipe.watch(*{keys.tournament_games(t) for _, t in pairs})
            found = self._read([("sismember", keys.tournament_games(t), g) for g, t in pairs])
            reads.counted = {game_id for (game_id, _), seen in zip(pairs, found, strict=True) if seen}
        return reads

    def _read(self, calls: list[tuple[Any, ...]]) -> list[Any]:
        with self._r.pipeline(transaction=False) as reads:
            for command, *args in calls:
                getattr(reads, command)(*args)
            return list(reads.execute())

    def _effects(self, item: _Scored, reads: _Reads, writes: list[Write]) -> list[sc.ScoringEvent]:
        """Queues one record's effects; returns the rating changes a finished game adds to its events."""
        keys, game_id, state = self.keys, item.record.game_id, item.state
        more: list[sc.ScoringEvent] = []
        for event in item.outputs:
            if event.HasField("hand_scored"):
                writes.append(_w("rpush", keys.hands(game_id), event.hand_scored.SerializeToString()))
            elif event.HasField("match_scored"):
                match = event.match_scored
                writes.append(_w("set", keys.match(game_id), match.SerializeToString()))
                ended = item.envelope.occurred_at.ToDatetime(tzinfo=dt.UTC)
                for period in periods(ended):
                    for winner in match.winners:
                        writes.append(_w("zincrby", keys.leaderboard(state.variant, period), 1, winner))
                for player, amount in zip(match.player_ids, match.payouts, strict=False):
                    writes.append(_w("rpush", keys.payouts(player), f"{game_id} {amount}"))
                more.extend(self._ratings(game_id, state, reads.ratings, writes))
                tournament = reads.tournaments.get(game_id)
                if tournament is not None and game_id not in reads.counted:
                    writes.extend(self._standing_writes(tournament, game_id, match))
        return more

    def _ratings(
        self, game_id: str, state: GameScore, ratings: dict[str, Rating], writes: list[Write]
    ) -> list[sc.ScoringEvent]:
        keys = self.keys
        rating_keys = [keys.rating(state.variant, p) for p in state.players]
        before = [ratings[key] for key in rating_keys]
        after = rate(before, ranks(state.variant, state.totals))
        events = []
        for player, old, new, key in zip(state.players, before, after, rating_keys, strict=True):
            ratings[key] = new  # a later game of this poll rates from here
            changed = sc.RatingChanged(
                player_id=player,
                variant=state.variant,
                mu_before=old.mu,
                mu_after=new.mu,
                sigma_before=old.sigma,
                sigma_after=new.sigma,
                ordinal=new.ordinal,
                games=new.games,
            )
            mapping = {"mu": new.mu, "sigma": new.sigma, "games": new.games}
            history = keys.rating_history(state.variant, player)
            writes.append(_w("hset", key, mapping=mapping))
            writes.append(_w("rpush", history, changed.SerializeToString()))
            events.append(sc.ScoringEvent(game_id=game_id, rating_changed=changed))
        return events

    def _standings(self, pipe: Any, tournament: str, game_id: str, match: sc.MatchScored) -> list[Write]:
        counted = self.keys.tournament_games(tournament)
        pipe.watch(counted)
        if pipe.sismember(counted, game_id):
            return []
        return self._standing_writes(tournament, game_id, match)

    def _standing_writes(self, tournament: str, game_id: str, match: sc.MatchScored) -> list[Write]:
        keys = self.keys
        writes: list[Write] = [
            _w("sadd", keys.tournament_games(tournament), game_id),
            _w("set", keys.tournament_variant(tournament), match.variant),
        ]
        for player, total in zip(match.player_ids, match.totals, strict=True):
            writes.append(_w("zincrby", keys.standings(tournament), total, player))
            writes.append(_w("hincrby", keys.standing_matches(tournament), player, 1))
        return writes

    def on_matchmaking_record(self, record: EventRecord) -> None:
        """TableFormed: remember a tournament game; count its result if scoring saw it first."""
        if record.event_type != "table_formed":
            return
        try:
            table = mm.MatchmakingEvent.FromString(record.payload).table_formed
        except DecodeError:
            self.table_skips.note(record, "the payload is not a MatchmakingEvent")
            return
        if not table.tournament_id:
            return
        link = self.keys.game_tournament(table.game_id)
        while True:
            with self._r.pipeline() as pipe:
                try:
                    pipe.watch(link, self.keys.match(table.game_id))
                    raw = pipe.get(self.keys.match(table.game_id))
                    writes = []
                    if raw is not None:
                        match = sc.MatchScored.FromString(raw)
                        writes = self._standings(pipe, table.tournament_id, table.game_id, match)
                    pipe.multi()
                    pipe.set(link, table.tournament_id)
                    _apply(pipe, writes)
                    pipe.execute()
                    return
                except redis.WatchError:
                    continue


def _w(command: str, *args: Any, **kwargs: Any) -> Write:
    return command, args, kwargs


def _apply(pipe: Any, writes: list[Write]) -> None:
    for command, args, kwargs in writes:
        getattr(pipe, command)(*args, **kwargs)
