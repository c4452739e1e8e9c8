"""Idempotent handlers: each writes its effects and its tracking record in one Redis MULTI/EXEC.

A game's events arrive in order (one partition per game), so a game's tracking record is the last seq
applied: a redelivered or replayed event with `seq <= tracked` changes nothing. The scoring events a
record causes go into the outbox in the same transaction (`outbox.py` publishes them).
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import replace
from typing import Any

import redis
from rummy.game.v1 import events_pb2 as ev
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy_store import EventRecord

from rummy_scoring.outbox import entry
from rummy_scoring.ratings import rate
from rummy_scoring.results import RELEVANT, GameScore, ScoringError, ranks, step
from rummy_scoring.store import Keys, Store, read_rating

log = logging.getLogger("rummy_scoring")
Write = tuple[str, tuple[Any, ...], dict[str, Any]]  # a Redis command queued after MULTI


def periods(ended_at: dt.datetime) -> list[str]:
    """Leaderboard periods a game counts in, by its end time (UTC): all time, its day, its ISO week."""
    year, week, _ = ended_at.isocalendar()
    return ["all", f"day:{ended_at:%Y-%m-%d}", f"week:{year}-W{week:02d}"]


class Handlers:
    """The scoring effects of game events and of TableFormed (tournament membership)."""

    def __init__(self, client: Store, prefix: str) -> None:
        self._r: Any = client  # redis-py's stubs type replies as a union; these keys hold bytes
        self.keys = Keys(prefix)

    def on_game_record(self, record: EventRecord) -> int:
        """Apply one game-event record; returns the number of scoring events it put in the outbox."""
        if record.event_type not in RELEVANT:
            return 0
        envelope = ev.GameEvent.FromString(record.payload)
        key = self.keys.game(record.game_id)
        while True:
            with self._r.pipeline() as pipe:
                try:
                    pipe.watch(key)
                    raw = pipe.get(key)
                    state = GameScore.loads(raw) if raw is not None else None
                    if state is not None and record.seq <= state.seq:
                        return 0  # tracked: counted before
                    if state is None and envelope.WhichOneof("event") != "game_started":
                        log.warning("game %s: seq %d before its start; skipped", record.game_id, record.seq)
                        return 0
                    new, outputs = step(state, record.seq, envelope)
                    writes = self._effects(pipe, record.game_id, new, outputs, envelope)
                    if outputs:
                        line = entry(
                            record.game_id, f"{record.game_id}/{record.seq}", new.published + 1, outputs
                        )
                        writes.append(_w("rpush", self.keys.outbox(), line))
                    pipe.multi()
                    _apply(pipe, writes)
                    pipe.set(key, GameScore.dumps(_published(new, len(outputs))))
                    pipe.execute()
                    return len(outputs)
                except redis.WatchError:
                    continue
                except ScoringError as exc:
                    log.error("game %s seq %d: %s; skipped", record.game_id, record.seq, exc)
                    return 0

    def _effects(
        self,
        pipe: Any,
        game_id: str,
        state: GameScore,
        outputs: list[sc.ScoringEvent],
        envelope: ev.GameEvent,
    ) -> list[Write]:
        """Reads what the effects depend on (watched) and returns the writes, queued after MULTI."""
        keys = self.keys
        writes: list[Write] = []
        for event in list(outputs):
            if event.HasField("hand_scored"):
                payload = event.hand_scored.SerializeToString()
                writes.append(_w("rpush", keys.hands(game_id), payload))
            elif event.HasField("match_scored"):
                match = event.match_scored
                writes.append(_w("set", keys.match(game_id), match.SerializeToString()))
                ended = envelope.occurred_at.ToDatetime(tzinfo=dt.UTC)
                for period in periods(ended):
                    for winner in match.winners:
                        board = keys.leaderboard(state.variant, period)
                        writes.append(_w("zincrby", board, 1, winner))
                for player, amount in zip(match.player_ids, match.payouts, strict=False):
                    writes.append(_w("rpush", keys.payouts(player), f"{game_id} {amount}"))
                outputs.extend(self._ratings(pipe, game_id, state, writes))
                tournament = pipe.get(keys.game_tournament(game_id))
                if tournament is not None:
                    writes.extend(self._standings(pipe, tournament.decode(), game_id, match))
        return writes

    def _ratings(
        self, pipe: Any, game_id: str, state: GameScore, writes: list[Write]
    ) -> list[sc.ScoringEvent]:
        keys = self.keys
        rating_keys = [keys.rating(state.variant, p) for p in state.players]
        pipe.watch(*rating_keys)
        before = [read_rating(pipe, keys, state.variant, p) for p in state.players]
        after = rate(before, ranks(state.variant, state.totals))
        events = []
        for player, old, new, key in zip(state.players, before, after, rating_keys, strict=True):
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
        keys = self.keys
        counted = keys.tournament_games(tournament)
        pipe.watch(counted)
        if pipe.sismember(counted, game_id):
            return []
        writes: list[Write] = [
            _w("sadd", counted, game_id),
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
        table = mm.MatchmakingEvent.FromString(record.payload).table_formed
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


def _published(state: GameScore, count: int) -> GameScore:
    return replace(state, published=state.published + count)


def _w(command: str, *args: Any, **kwargs: Any) -> Write:
    return command, args, kwargs


def _apply(pipe: Any, writes: list[Write]) -> None:
    for command, args, kwargs in writes:
        getattr(pipe, command)(*args, **kwargs)
