"""Each variant's house-rule options (its spec's §5 table), with the spec defaults.

They live together, apart from the variant modules, because the pure rule helpers read them
(`contract_rules`, `scoring.prize_split`) and the variant modules import those helpers. A new variant
may keep its options class in its own module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class VariantOptions:
    """What every variant's options class is: `Rules.options` holds one, decoded by its class name."""


@dataclass(frozen=True, slots=True)
class KalookiOptions(VariantOptions):
    """Kalooki house rules, spec §5 defaults (plus the game's prize pool, §3.13.2)."""

    opening_min_points: int = 40
    ace_low_in_runs: bool = True
    discard_draw_before_opening: str = "free"
    freed_joker_must_be_used_same_turn: bool = True
    kalooki_exempt_from_opening: bool = True
    joker_penalty: int = 25
    kalooki_surcharge: int = 25
    allow_repeated_suits_in_natural_sets: bool = False
    prize_winner_min_pct: int = 75
    prize_cutoff_points: int = 100
    prize_cutoff_includes_kalooki_surcharge: bool = True
    match_mode: str = "single_deal"
    elimination_limit: int = 150
    prize_pool: int = 0
    stalemate_reshuffles: int = 3  # meldstream M1 (README)


@dataclass(frozen=True, slots=True)
class Rummy40Options(VariantOptions):
    """Rummy 40 house rules, spec §5 defaults; `None` means "by table size" as the spec says."""

    packs: int | None = None
    opening_min_points: int = 40
    opening_single_meld: bool = False
    layoff_on_others: bool = False
    exchanged_joker_must_be_used_same_turn: bool = False
    go_out_by_discard: bool = False
    allow_repeated_suits_in_sets: bool = False
    joker_penalty: int = 20
    deals_per_match: int | None = None
    stalemate_reshuffles: int = 3  # meldstream M1 (README)


@dataclass(frozen=True, slots=True)
class Rummy500Options(VariantOptions):
    """Rummy 500 house rules, spec §5 defaults."""

    packs: int = 1
    jokers: int = 0
    top_discard_free: bool = False
    target_score: int = 500
    cards_dealt: int | None = None
    going_out_requires_discard: bool = False
    exhausted_stock: str = "continue_with_discards_then_end"
    stalemate_reshuffles: int = 3  # meldstream M1 (README)


@dataclass(frozen=True, slots=True)
class ContractOptions(VariantOptions):
    """Contract rummy house rules, spec §5 defaults.

    `split_from_players` is read by `tables.table_sizes` (one game is one table); the buy timing
    options are the service's: the engine sees requests in event order (D12).

    `first_round`..`last_round` (meldstream): the rounds one game plays, contracts in order. A
    multi-table tournament (§3.14 D19) rotates players between rounds, so each table plays each
    round as a game of its own (`first_round == last_round`); `first_dealer` then sets the dealer
    seat the rotation prescribes (§3.14.4) instead of drawing it from the seed (D2).
    """

    packs_for_5_players: int = 3
    split_from_players: int = 8
    threes_same_rank_allowed: bool = False
    fourth_buy: str = "penalty"
    max_buys_per_round: int = 4
    buy_penalty_points: int = 200
    buy_simultaneity_window_ms: int = 0
    buy_window_ms: int | None = None
    closing_by_discard: bool = True
    min_natural_cards_per_meld: int = 1
    stalemate_reshuffles: int = 3  # meldstream M1 (README)
    first_round: int = 1
    last_round: int = 8
    first_dealer: int | None = None


# The options that take one of a few words, and those words.
KALOOKI_CHOICES: Final = {
    "discard_draw_before_opening": ("free", "must_use_in_opening"),
    "match_mode": ("single_deal", "elimination"),
}
RUMMY500_CHOICES: Final = {
    "exhausted_stock": ("continue_with_discards_then_end", "end_immediately", "reshuffle_discards"),
}
CONTRACT_CHOICES: Final = {"fourth_buy": ("penalty", "reject")}
