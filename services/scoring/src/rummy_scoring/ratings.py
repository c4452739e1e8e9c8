"""Player ratings with openskill's Plackett-Luce model.

Why openskill: it is maintained, typed, rates multiplayer games with ties natively (a table of 2-7
ranked by totals) and has no patents (TrueSkill) or pairwise-only restriction (Elo, Glicko-2). Pairing
uses the conservative `ordinal` (mu - 3 sigma), so a new player starts at 0 and rises with results.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from openskill.models import PlackettLuce

MODEL: Final = PlackettLuce()


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float = MODEL.mu
    sigma: float = MODEL.sigma
    games: int = 0

    @property
    def ordinal(self) -> float:
        return self.mu - 3 * self.sigma


DEFAULT: Final = Rating()


def rate(before: Sequence[Rating], ranks: Sequence[int]) -> list[Rating]:
    """Ratings after one game; `ranks[i]` is seat i's finishing position (1 = best, ties share)."""
    if len(before) != len(ranks) or len(before) < 2:
        raise ValueError("rate needs a rank for each of at least two players")
    teams = [[MODEL.create_rating([r.mu, r.sigma])] for r in before]
    after = MODEL.rate(teams, ranks=[float(rank) for rank in ranks])
    return [Rating(t[0].mu, t[0].sigma, r.games + 1) for t, r in zip(after, before, strict=True)]
