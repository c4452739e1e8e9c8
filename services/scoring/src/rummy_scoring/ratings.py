"""Player ratings with openskill's Plackett-Luce model, applied in the order the game log defines.

Why openskill: it is maintained, typed, rates multiplayer games with ties natively (a table of 2-7
ranked by totals) and has no patents (TrueSkill) or pairwise-only restriction (Elo, Glicko-2). Pairing
uses the conservative `ordinal` (mu - 3 sigma), so a new player starts at 0 and rises with results.

Why ladders: a player's games sit in different partitions, which are consumed in no fixed interleaving,
so rating games as they arrive made ratings depend on timing. Each (variant, player) keeps its rated
games ordered by the log (`Order`: the GameEnded time, then the game id); a game that arrives after
games that follow it is rated in its place and those games are rated again, so any interleaving ends
with the ratings an in-order arrival gives. The same holds with several scoring instances, each rating
its partitions' games: a ladder is read and written under WATCH (`handlers.py`), so instances take
turns on a player, and the turns' order does not change the result.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from openskill.models import PlackettLuce

MODEL: Final = PlackettLuce()
KEEP: Final = 64
"""Rated games a ladder keeps per (variant, player): ~100 bytes each in the rating's hash, read and written
whenever the player's rating changes. The bound on reordering: a game that ends before all of a player's
kept games, once older ones were dropped, cannot be put in its place and is rated just before the oldest
kept one; so rebuilds agree while no partition is consumed more than KEEP of a player's games behind
another (live, partitions are seconds apart, far fewer games than that for any player)."""


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float = MODEL.mu
    sigma: float = MODEL.sigma
    games: int = 0

    @property
    def ordinal(self) -> float:
        return self.mu - 3 * self.sigma


DEFAULT: Final = Rating()

Order = tuple[int, str]  # where the log puts a rated game: GameEnded's time (ns since the epoch), game id


def rate(before: Sequence[Rating], ranks: Sequence[int]) -> list[Rating]:
    """Ratings after one game; `ranks[i]` is seat i's finishing position (1 = best, ties share)."""
    if len(before) != len(ranks) or len(before) < 2:
        raise ValueError("rate needs a rank for each of at least two players")
    teams = [[MODEL.create_rating([r.mu, r.sigma])] for r in before]
    after = MODEL.rate(teams, ranks=[float(rank) for rank in ranks])
    return [Rating(t[0].mu, t[0].sigma, r.games + 1) for t, r in zip(after, before, strict=True)]


@dataclass(frozen=True, slots=True)
class Rated:
    """A game in a ladder: its place in the log and the player's rating after it."""

    order: Order
    mu: float
    sigma: float


@dataclass(slots=True)
class Ladder:
    """One player's rated games in one variant, in log order: the last KEEP, after `base` (the rating
    before the oldest kept game, with the number of games before it)."""

    base: Rating
    games: list[Rated]
    rewritten: int | None = field(
        default=None, compare=False
    )  # first game (0: the player's first) rated anew

    @property
    def current(self) -> Rating:
        return self.after(len(self.games) - 1)

    def after(self, i: int) -> Rating:
        """The rating after the game at index i (i = -1: the base)."""
        if i < 0:
            return self.base
        game = self.games[i]
        return Rating(game.mu, game.sigma, self.base.games + i + 1)

    def find(self, order: Order) -> tuple[int, bool]:
        """The index of the game at `order`, or where it goes; and whether it is there."""
        i = bisect_left(self.games, order, key=lambda game: game.order)
        return i, i < len(self.games) and self.games[i].order == order

    def put(self, i: int, order: Order, rating: Rating, insert: bool) -> bool:
        """Record the rating after the game at index i (inserted there, or rated again); returns whether
        the games after it must be rated again."""
        game = Rated(order, rating.mu, rating.sigma)
        if insert:
            self.games.insert(i, game)
        elif self.games[i] == game:
            return False
        else:
            self.games[i] = game
        first = self.base.games + i
        self.rewritten = first if self.rewritten is None else min(self.rewritten, first)
        return i + 1 < len(self.games)

    def trim(self) -> None:
        """Keep the last KEEP games; the base moves to the rating after the last one dropped."""
        drop = len(self.games) - KEEP
        if drop > 0:
            self.base = self.after(drop - 1)
            del self.games[:drop]

    def dumps(self) -> str:
        games = [[g.order[0], g.order[1], g.mu, g.sigma] for g in self.games]
        return json.dumps({"base": [self.base.mu, self.base.sigma, self.base.games], "games": games})

    @staticmethod
    def loads(text: str | bytes) -> Ladder:
        data = json.loads(text)
        mu, sigma, games = data["base"]
        return Ladder(Rating(mu, sigma, games), [Rated((t, g), m, s) for t, g, m, s in data["games"]])
