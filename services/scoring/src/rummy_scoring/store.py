"""Scoring's keys: per-game state with its tracking seq, results, ratings, leaderboards, payouts.

The store is Redis or its embedded stand-in `SqliteKV` (the same commands). Every key starts with the
configured prefix (tests isolate themselves with it). Writes happen only in `handlers.py`, inside one
MULTI/EXEC with the tracking record; this module names keys and reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rummy.scoring.v1 import scoring_pb2 as sc
from rummy_rules.variant import variant_named
from rummy_store.locations import KeyValue

from rummy_scoring.ratings import DEFAULT, Ladder, Rating
from rummy_scoring.results import GameScore

Store = KeyValue  # Redis, or `SqliteKV` on the embedded store
LIVE_KEPT = 1000  # live games listed at most: a game never ended (its store lost) must not stay forever


@dataclass(frozen=True, slots=True)
class Keys:
    """Key names (STYLE.md 7.7: `<area>:<id>:<what>`)."""

    prefix: str

    def outbox(self) -> str:
        return f"{self.prefix}scoring:outbox"

    def game(self, game_id: str) -> str:
        return f"{self.prefix}scoring:game:{game_id}:state"

    def hands(self, game_id: str) -> str:
        return f"{self.prefix}scoring:game:{game_id}:hands"

    def match(self, game_id: str) -> str:
        return f"{self.prefix}scoring:game:{game_id}:match"

    def live(self) -> str:
        """The games seated and not ended, scored by their start time (ListLiveGames)."""
        return f"{self.prefix}scoring:live"

    def game_tournament(self, game_id: str) -> str:
        return f"{self.prefix}scoring:game:{game_id}:tournament"

    def rating(self, variant: str, player: str) -> str:
        return f"{self.prefix}scoring:rating:{variant}:{player}"

    def rating_history(self, variant: str, player: str) -> str:
        return f"{self.prefix}scoring:rating:{variant}:{player}:history"

    def leaderboard(self, variant: str, period: str) -> str:
        return f"{self.prefix}scoring:leaderboard:{variant}:{period}"

    def names(self) -> str:
        """Player id -> the name shown at their latest rated game (for the leaderboards)."""
        return f"{self.prefix}scoring:names"

    def payouts(self, player: str) -> str:
        return f"{self.prefix}scoring:payouts:{player}"

    def standings(self, tournament_id: str) -> str:
        return f"{self.prefix}scoring:tournament:{tournament_id}:standings"

    def standing_matches(self, tournament_id: str) -> str:
        return f"{self.prefix}scoring:tournament:{tournament_id}:matches"

    def tournament_games(self, tournament_id: str) -> str:
        return f"{self.prefix}scoring:tournament:{tournament_id}:games"

    def tournament_variant(self, tournament_id: str) -> str:
        return f"{self.prefix}scoring:tournament:{tournament_id}:variant"


def rating_of(raw: dict[bytes, bytes]) -> Rating:
    """A rating from its hash (HGETALL's reply); a player never rated has the default."""
    if not raw:
        return DEFAULT
    return Rating(float(raw[b"mu"]), float(raw[b"sigma"]), int(raw[b"games"]))


def ladder_of(raw: dict[bytes, bytes]) -> Ladder:
    """A player's ladder from the rating's hash; a rating kept before ladders were is its base."""
    if b"ladder" in raw:
        return Ladder.loads(raw[b"ladder"])
    return Ladder(rating_of(raw), [])


class ScoreReader:
    """The query side: what the RPCs answer from."""

    def __init__(self, client: Store, prefix: str) -> None:
        self._r: Any = client  # redis-py's stubs type replies as a union; these keys hold bytes
        self.keys = Keys(prefix)

    def state(self, game_id: str) -> GameScore | None:
        raw = self._r.get(self.keys.game(game_id))
        return GameScore.loads(raw) if raw is not None else None

    def hands(self, game_id: str) -> list[sc.HandScored]:
        return [sc.HandScored.FromString(raw) for raw in self._r.lrange(self.keys.hands(game_id), 0, -1)]

    def match(self, game_id: str) -> sc.MatchScored | None:
        raw = self._r.get(self.keys.match(game_id))
        return sc.MatchScored.FromString(raw) if raw is not None else None

    def live_games(self, limit: int) -> list[tuple[str, float, GameScore]]:
        """The newest `limit` live games: id, start time and scoring's state of each."""
        rows = self._r.zrevrange(self.keys.live(), 0, limit - 1, withscores=True)
        states = self._r.mget([self.keys.game(member.decode()) for member, _ in rows]) if rows else []
        return [
            (member.decode(), float(started), GameScore.loads(raw))
            for (member, started), raw in zip(rows, states, strict=True)
            if raw is not None
        ]

    def rating(self, variant: str, player: str) -> Rating:
        return rating_of(self._r.hgetall(self.keys.rating(variant, player)))

    def rating_history(self, variant: str, player: str) -> list[sc.RatingChanged]:
        key = self.keys.rating_history(variant, player)
        return [sc.RatingChanged.FromString(raw) for raw in self._r.lrange(key, 0, -1)]

    def leaderboard(
        self, variant: str, period: str, offset: int, limit: int
    ) -> tuple[list[tuple[str, float]], int]:
        key = self.keys.leaderboard(variant, period)
        rows = self._r.zrevrange(key, offset, offset + limit - 1, withscores=True)
        return [(member.decode(), float(score)) for member, score in rows], int(self._r.zcard(key))

    def names(self, players: list[str]) -> list[str]:
        """The names shown for `players` ("" for one never in a rated game)."""
        if not players:
            return []
        return [(raw or b"").decode() for raw in self._r.hmget(self.keys.names(), players)]

    def standings(self, tournament_id: str) -> list[tuple[str, int, int]]:
        variant = self._r.get(self.keys.tournament_variant(tournament_id))
        key = self.keys.standings(tournament_id)
        higher = variant is not None and variant_named(variant.decode()).higher_is_better
        rows = (self._r.zrevrange if higher else self._r.zrange)(key, 0, -1, withscores=True)
        matches = self._r.hgetall(self.keys.standing_matches(tournament_id))
        return [(m.decode(), int(score), int(matches.get(m, 0))) for m, score in rows]

    def payouts(self, player: str) -> list[tuple[str, int]]:
        out = []
        for raw in self._r.lrange(self.keys.payouts(player), 0, -1):
            game_id, _, amount = raw.decode().rpartition(" ")
            out.append((game_id, int(amount)))
        return out
