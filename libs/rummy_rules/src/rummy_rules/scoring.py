"""Deal and game results: penalties with the Kalooki surcharge, the prize-pool split, match winners."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

from rummy_rules.cards import Card
from rummy_rules.errors import RuleViolation
from rummy_rules.melds import hand_penalty
from rummy_rules.options import KalookiOptions
from rummy_rules.rules import Rules

K = TypeVar("K")


def loser_penalty(cards: Sequence[Card], rules: Rules, winner_kalooki: bool) -> int:
    """A loser's penalty for a deal: cards in hand, plus the surcharge after a Kalooki (kalooki §3.12.3)."""
    return hand_penalty(cards, rules) + (rules.kalooki_surcharge if winner_kalooki else 0)


def prize_split(
    pool: int, winner: K, penalties: Mapping[K, int], rules: Rules, winner_kalooki: bool = False
) -> dict[K, int]:
    """Divide a prize pool (integer units) after a Kalooki deal, kalooki §3.13.2 D17.

    The losers' pot is (100 - winner minimum %) of the pool; a loser below the cut-off gets a share
    weighted by `cutoff - penalty` (the distance from the cut-off, so weights fall to 0 at it), rounded
    down; the winner gets the rest, which is never less than the minimum.
    """
    options = rules.options
    if not isinstance(options, KalookiOptions):
        raise RuleViolation("not_applicable", "a prize-pool split exists only in kalooki", "kalooki §3.13.2")
    if type(pool) is not int or pool < 0:
        raise RuleViolation(
            "bad_pool", f"the pool must be a non-negative integer, got {pool!r}", "kalooki D17"
        )
    if winner in penalties:
        raise RuleViolation("bad_penalties", "the winner has no penalty of their own", "kalooki §3.12.1")
    cutoff = options.prize_cutoff_points
    surcharge = rules.kalooki_surcharge if winner_kalooki else 0
    counted = {
        player: penalty - (0 if options.prize_cutoff_includes_kalooki_surcharge else surcharge)
        for player, penalty in penalties.items()
    }
    losers_pot = pool * (100 - options.prize_winner_min_pct) // 100
    weights = {player: cutoff - penalty for player, penalty in counted.items() if penalty < cutoff}
    total_weight = sum(weights.values())
    shares = {player: 0 for player in penalties}
    if total_weight:
        for player, weight in weights.items():
            shares[player] = losers_pot * weight // total_weight
    return {winner: pool - sum(shares.values()), **shares}


def match_winners(totals: Mapping[K, int], eligible: Sequence[K] | None = None) -> list[K]:
    """Players with the fewest accumulated penalty points; equal best totals share (rummy40 §3.12 D14)."""
    players = list(totals) if eligible is None else list(eligible)
    best = min(totals[player] for player in players)
    return [player for player in players if totals[player] == best]
