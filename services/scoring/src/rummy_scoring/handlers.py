"""Idempotent handlers: a poll's effects and tracking records are written in one Redis MULTI/EXEC.

A game's events arrive in order (one partition per game), so a game's tracking record is the last seq
applied: a redelivered or replayed event with `seq <= tracked` changes nothing. A consumer poll is one
batch: each game's state is read once (WATCH + MGET), its events are folded in memory in log order, and
every effect, tracking record and outbox line of the poll commits together, so a poll costs a handful of
round trips however many records and games it holds (per record it was ~3, ~9 at a game's end). The
scoring events a record causes go into the outbox in the same transaction (`outbox.py` publishes them).

Ratings follow the log's order, not the order games arrive in (`ratings.py`): the kept games that come
after a game that arrived late are rated again in the same transaction, and their corrected rating
changes are published under their own game ids, after their first ones, so a consumer that keeps each
player's change with the most games (the later record on a tie) ends with the corrected ratings.

Several instances (one consumer group, each a share of the partitions) write the same keys: a player's
games lie in partitions different instances own, and a moving partition's batch may be applied by its
old and its new owner. Each transaction WATCHes every key its effects depend on (the games' states with
their tracking seqs, the players' ladders, tournament links and counted games) and reads them only after
the WATCH, so two transactions that touch a key in common serialise: the later EXEC fails and its poll
is folded again from fresh reads (a batch applied meanwhile by another instance is then a no-op). The
writes not watched are appends and increments (hands, payouts, leaderboards, the outbox) that commit
with a watched game's tracking record, so they happen once with it.

A record scoring can never apply (an unknown event type, another event format, a payload that is not
what its headers say, an event out of its game's sequence) is skipped with one log line and counted:
retrying it would stop every game of every partition behind it, and it would fail again.
"""

from __future__ import annotations

import datetime as dt
import heapq
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import redis
from google.protobuf.message import DecodeError
from rummy.game.v1 import events_pb2 as ev
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy_store import EventRecord
from rummy_store.event_log import TOPIC

from rummy_scoring import telemetry
from rummy_scoring.config import MATCHMAKING_TOPIC
from rummy_scoring.outbox import entry
from rummy_scoring.ratings import Ladder, Order, Rating, rate
from rummy_scoring.results import GameScore, ScoringError, ranks, read, step
from rummy_scoring.store import LIVE_KEPT, Keys, Store, ladder_of

log = logging.getLogger("rummy_scoring")
Write = tuple[str, tuple[Any, ...], dict[str, Any]]  # a Redis command queued after MULTI
Skip = tuple[EventRecord, str]  # a record passed over for good, and why
Player = tuple[str, str]  # (variant, player id): whose ladder


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

    ladders: dict[Player, Ladder]  # the players' rated games; the ratings pass adds what it reads
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
        self,
        client: Store,
        prefix: str,
        game_topic: str = TOPIC,
        tables_topic: str = MATCHMAKING_TOPIC,
        aliases: Mapping[str, str] | None = None,
    ) -> None:
        self._r: Any = client  # redis-py's stubs type replies as a union; these keys hold bytes
        self.keys = Keys(prefix)
        self.game_skips = Skips(game_topic)
        self.table_skips = Skips(tables_topic)
        self._aliases = dict(aliases or {})  # legacy player id -> account id (results.seat)

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
        live: dict[str, float | None] = {}  # game id -> start time when seated, None when ended
        for record, envelope in readable:
            state = states[record.game_id]
            if state is not None and record.seq <= state.seq:
                continue  # tracked: counted before
            try:
                new, outputs = step(state, record.seq, envelope, self._aliases)
            except Exception as exc:  # step is pure: what it refuses now it refuses on every retry
                unusable.append((record, f"{type(exc).__name__}: {exc}"))
                continue
            states[record.game_id] = new
            if record.event_type == "table_seated":
                live[record.game_id] = envelope.occurred_at.ToNanoseconds() / 1e9
            elif record.event_type == "game_ended":
                live[record.game_id] = None
            if outputs:
                scored.append(_Scored(record, envelope, new, outputs))
        ended = [s for s in scored if s.outputs[0].HasField("match_scored")]
        reads = self._read_for(pipe, ended)
        writes: list[Write] = []
        ratings = self._rate(pipe, ended, states, reads.ladders, writes)
        published = {game_id: state.published for game_id, state in states.items() if state is not None}
        count = 0
        for item in scored:
            outputs = item.outputs + self._effects(item, reads, ratings, writes)
            game_id, seq = item.record.game_id, item.record.seq
            line = entry(game_id, f"{game_id}/{seq}", published[game_id] + 1, outputs)
            writes.append(_w("rpush", self.keys.outbox(), line))
            published[game_id] += len(outputs)
            count += len(outputs)
        for game_id, corrected in ratings.items():  # games rated again: their corrections, after them
            first = published[game_id] + 1
            writes.append(
                _w("rpush", self.keys.outbox(), entry(game_id, f"{game_id}/rated/{first}", first, corrected))
            )
            published[game_id] += len(corrected)
            count += len(corrected)
        writes.extend(self._live_writes(live))
        pipe.multi()
        _apply(pipe, writes)
        for game_id, state in states.items():
            if state is not None and (
                state is not before.get(game_id, state) or published[game_id] != state.published
            ):
                pipe.set(
                    self.keys.game(game_id), GameScore.dumps(replace(state, published=published[game_id]))
                )
        pipe.execute()
        for item in ended:
            telemetry.result_scored(item.record.game_id, item.outputs[0].match_scored)
        return count, unusable

    def _live_writes(self, live: dict[str, float | None]) -> list[Write]:
        """The live list's changes: seated games in (the newest LIVE_KEPT kept), ended games out."""
        key = self.keys.live()
        started = {game_id: at for game_id, at in live.items() if at is not None}
        writes = [_w("zadd", key, started), _w("zremrangebyrank", key, 0, -LIVE_KEPT - 1)] if started else []
        ended = [game_id for game_id, at in live.items() if at is None]
        return writes + ([_w("zrem", key, *ended)] if ended else [])

    def _read_for(self, pipe: Any, ended: list[_Scored]) -> _Reads:
        """WATCH and read the ladders, tournament links and standings the finished games touch."""
        reads = _Reads({}, {}, set())
        if not ended:
            return reads
        keys = self.keys
        players = list(dict.fromkeys((s.state.variant, p) for s in ended for p in s.state.players))
        rating_keys = [keys.rating(variant, player) for variant, player in players]
        link_keys = [keys.game_tournament(s.record.game_id) for s in ended]
        pipe.watch(*rating_keys, *link_keys)
        # Read on a second connection, in one round trip: EXEC fails if a watched key changes before it,
        # so what these reads saw still holds when the writes commit.
        replies = self._read([("hgetall", key) for key in rating_keys] + [("get", key) for key in link_keys])
        ladders = replies[: len(rating_keys)]
        reads.ladders = {p: ladder_of(raw) for p, raw in zip(players, ladders, strict=True)}
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

    def _rate(
        self,
        pipe: Any,
        ended: list[_Scored],
        states: dict[str, GameScore | None],
        ladders: dict[Player, Ladder],
        writes: list[Write],
    ) -> dict[str, list[sc.ScoringEvent]]:
        """Rate the poll's finished games in log order, and again every kept game after one of them in a
        ladder, in log order too; queues the ladder and history writes. Returns the rating changes by game
        (the poll's games' and the corrections of games rated before). Only rated games (`GameScore.rated`:
        a rated queue's or a tournament's table, formed by matchmaking) enter a ladder."""
        new = {
            s.record.game_id: (s.envelope.occurred_at.ToNanoseconds(), s.record.game_id)
            for s in ended
            if s.state.rated
        }
        queue = sorted(new.values())
        queued = set(new)
        changes: dict[str, list[sc.ScoringEvent]] = {}
        while queue:
            game_id = queue[0][1]
            if game_id not in states or _unread(states[game_id], ladders):
                self._load(pipe, queue, states, ladders)  # for every queued game at once
                continue
            order = heapq.heappop(queue)
            state = states[game_id]
            if state is None:
                continue  # no state to rate it from: left as rated
            players = [(state.variant, player) for player in state.players]
            places = [ladders[p].find(order) for p in players]
            if game_id not in new and not all(found for _, found in places):
                continue  # past KEEP in a ladder: left as rated
            for (variant, player), (i, found) in zip(players, places, strict=True):
                ladder = ladders[variant, player]
                if not found and i == 0 and ladder.games and ladder.base.games:
                    log.warning(
                        "game %s ended before the %d %s games kept for %s (ratings.KEEP); rated before them",
                        *(game_id, len(ladder.games), variant, player),
                    )
            before = [ladders[p].after(i - 1) for p, (i, _) in zip(players, places, strict=True)]
            after = rate(before, ranks(state.variant, state.totals, state.forfeited))
            events = []
            for p, (i, found), old, rating in zip(players, places, before, after, strict=True):
                ladder = ladders[p]
                if ladder.put(i, order, rating, insert=not found):
                    following = ladder.games[i + 1].order
                    if following[1] not in queued:
                        queued.add(following[1])
                        heapq.heappush(queue, following)
                events.append(sc.ScoringEvent(game_id=game_id, rating_changed=_changed(p, old, rating)))
            changes[game_id] = events
        for p, ladder in ladders.items():
            if ladder.rewritten is not None:
                writes.extend(self._ladder_writes(p, ladder, ladder.rewritten))
        return changes

    def _load(
        self,
        pipe: Any,
        queue: list[Order],
        states: dict[str, GameScore | None],
        ladders: dict[Player, Ladder],
    ) -> None:
        """WATCH and read what the queued games need that nothing has read yet (games rated again after
        a late one): their states, then their players' ladders."""
        games = [game_id for _, game_id in queue if game_id not in states]
        if games:
            keys = [self.keys.game(game_id) for game_id in games]
            pipe.watch(*keys)
            for game_id, raw in zip(games, self._read([("get", key) for key in keys]), strict=True):
                states[game_id] = GameScore.loads(raw) if raw is not None else None
        wanted: dict[Player, None] = {}
        for _, game_id in queue:
            state = states[game_id]
            if state is not None:
                wanted |= dict.fromkeys(
                    (state.variant, p) for p in state.players if (state.variant, p) not in ladders
                )
        if wanted:
            keys = [self.keys.rating(variant, player) for variant, player in wanted]
            pipe.watch(*keys)
            for p, raw in zip(wanted, self._read([("hgetall", key) for key in keys]), strict=True):
                ladders[p] = ladder_of(raw)

    def _ladder_writes(self, player: Player, ladder: Ladder, start: int) -> list[Write]:
        """The ladder and current rating, and the history rewritten from game `start` (0 = the first)."""
        history = self.keys.rating_history(*player)
        writes = [_w("ltrim", history, 0, start - 1) if start else _w("delete", history)]
        for i in range(start - ladder.base.games, len(ladder.games)):
            change = _changed(player, ladder.after(i - 1), ladder.after(i))
            writes.append(_w("rpush", history, change.SerializeToString()))
        ladder.trim()
        current = ladder.current
        mapping = {"mu": current.mu, "sigma": current.sigma, "games": current.games, "ladder": ladder.dumps()}
        writes.append(_w("hset", self.keys.rating(*player), mapping=mapping))
        return writes

    def _effects(
        self,
        item: _Scored,
        reads: _Reads,
        ratings: dict[str, list[sc.ScoringEvent]],
        writes: list[Write],
    ) -> list[sc.ScoringEvent]:
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
                for period in periods(ended) if state.rated else ():  # a casual game is no one's win
                    for winner in match.winners:
                        writes.append(_w("zincrby", keys.leaderboard(state.variant, period), 1, winner))
                shown = {p: n for p, n in zip(state.players, state.names, strict=False) if n}
                if state.rated and shown:
                    writes.append(_w("hset", keys.names(), mapping=shown))
                for player, amount in zip(match.player_ids, match.payouts, strict=False):
                    writes.append(_w("rpush", keys.payouts(player), f"{game_id} {amount}"))
                more.extend(ratings.pop(game_id, []))
                tournament = reads.tournaments.get(game_id)
                if tournament is not None and game_id not in reads.counted:
                    writes.extend(self._standing_writes(tournament, game_id, match))
        return more

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


def _unread(state: GameScore | None, ladders: dict[Player, Ladder]) -> bool:
    """Whether a game's players have a ladder not read yet."""
    return state is not None and any((state.variant, p) not in ladders for p in state.players)


def _changed(player: Player, before: Rating, after: Rating) -> sc.RatingChanged:
    variant, player_id = player
    return sc.RatingChanged(
        player_id=player_id,
        variant=variant,
        mu_before=before.mu,
        mu_after=after.mu,
        sigma_before=before.sigma,
        sigma_after=after.sigma,
        ordinal=after.ordinal,
        games=after.games,
    )


def _w(command: str, *args: Any, **kwargs: Any) -> Write:
    return command, args, kwargs


def _apply(pipe: Any, writes: list[Write]) -> None:
    for command, args, kwargs in writes:
        getattr(pipe, command)(*args, **kwargs)
