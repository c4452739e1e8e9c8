"""Rules as data: the engine parameters of one variant at one table size, and how they are built.

`rummy_rules.variant.rules_for(variant, players, **options)` is the only way in: it checks the variant
id, the table size and every option (`parse_options`), and asks the variant's module
(`rummy_rules.variants`) for a frozen `Rules` that the meld and game code read. This module knows no
variant: each one's citations reach it through `CITATIONS` when the variant is registered. Options
keep their spec names so an operator can copy them from the spec tables unchanged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from rummy_rules.errors import RuleViolation
from rummy_rules.options import VariantOptions

CITATIONS: Final[dict[str, Mapping[str, str]]] = {}
"""Variant id -> its rule key -> spec section (`Variant.citations`), filled by `variant.register`."""


class JokerSwap(Enum):
    """Which jokers may be taken back from the table, and how."""

    NONE = "none"
    KALOOKI = "kalooki"  # runs: exact card; 3-card sets: both missing suits / D11 (kalooki §3.8)
    REPRESENTED = "represented"  # give the represented card, runs and sets (rummy40 §3.8)
    RUNS_ONLY = "runs_only"  # runs only, exact card (contract §3.9.3)


class GoingOut(Enum):
    """How a hand may be emptied to win a deal."""

    DISCARD_REQUIRED = "discard_required"  # kalooki src ¶18
    MELD_ALL = "meld_all"  # rummy40 D11
    EITHER = "either"  # rummy500 D9, contract D10, rummy40 option go_out_by_discard


class Reshuffle(Enum):
    """What happens when the stock runs out."""

    KEEP_LAST_DISCARD = "keep_last_discard"  # kalooki D18: at the end of the turn, last discard stays
    ALL_AT_ONCE = "all_at_once"  # rummy40 D12: every face-up card, as soon as the stock is empty
    ALL_BUT_TOP = "all_but_top"  # contract D16, rummy500 option exhausted_stock=reshuffle_discards
    NONE_END_DEAL = "none_end_deal"  # rummy500 D10 default: discard-pile draws only, then the deal ends
    END_IMMEDIATELY = "end_immediately"  # rummy500 option: the deal ends at the first draw from no stock


class MatchMode(Enum):
    """How deals combine into a game."""

    SINGLE_DEAL = "single_deal"  # kalooki D16
    ELIMINATION = "elimination"  # kalooki option match_mode
    FIXED_DEALS = "fixed_deals"  # rummy40 §3.12
    TARGET_SCORE = "target_score"  # rummy500 §3.10
    CONTRACT_ROUNDS = "contract_rounds"  # contract §3.4


def pip_penalties(ace: int, joker: int) -> tuple[int, ...]:
    """Penalty per rank index (0 = joker, 1 = ace ... 13 = king): pips face value, J/Q/K 10."""
    return (joker, ace, *range(2, 11), 10, 10, 10)


# Members bound to module names, read on every decision (see `state.DRAW`).
MELD_ALL: Final = GoingOut.MELD_ALL
DISCARD_REQUIRED: Final = GoingOut.DISCARD_REQUIRED
ALL_BUT_TOP: Final = Reshuffle.ALL_BUT_TOP
ALL_AT_ONCE: Final = Reshuffle.ALL_AT_ONCE
END_IMMEDIATELY: Final = Reshuffle.END_IMMEDIATELY
KEEP_LAST_DISCARD: Final = Reshuffle.KEEP_LAST_DISCARD


@dataclass(frozen=True, slots=True)
class Rules:
    """Everything the engine needs to know about one variant at one table size.

    Parameters (see libs/rummy_rules/README.md for the per-variant table):
    packs/jokers/hand_size/upcard describe the deal; set_* and run_* the meld shapes; ace_* the
    meld values of aces; `penalty[rank]` the value of a card left in hand (index 0 = joker);
    the rest the turn, opening, going-out, reshuffle and match rules.
    """

    variant: str
    players: int
    packs: int
    jokers: int
    hand_size: int
    upcard: bool
    set_min: int
    set_max: int  # 0 = no limit (contract threes)
    natural_set_distinct_suits: bool
    joker_set_distinct_suits: bool
    run_min: int
    ace_low_in_runs: bool
    ace_low_value: int
    ace_high_value: int
    ace_set_value: int
    penalty: tuple[int, ...]
    opening_min_points: int
    opening_single_meld: bool
    open_before_layoff: bool
    layoff_on_others: bool
    joker_swap: JokerSwap
    freed_joker_must_be_used: bool
    going_out: GoingOut
    reshuffle: Reshuffle
    kalooki_surcharge: int
    kalooki_exempt_from_opening: bool
    discard_draw_must_open: bool
    match_mode: MatchMode
    deals: int
    elimination_limit: int
    prize_pool: int
    options: VariantOptions
    # meldstream M1: a deal ends after this many consecutive stock cycles without a card melded,
    # laid off or swapped (0 = never).
    stalemate_reshuffles: int = 3
    # The number of the game's first deal: in contract the first round played (option first_round);
    # the deal number is the round there, and `deals` the last round.
    first_deal: int = 1
    # The first dealer's seat when the options fix it (contract first_dealer), else None: drawn from the seed.
    first_dealer: int | None = None

    def cite(self, key: str) -> str:
        """The spec citation for rule `key` of this variant, e.g. `kalooki §3.6 D7`."""
        return f"{self.variant} {CITATIONS[self.variant].get(key, '')}".rstrip()


def parse_options(
    variant: str, cls: type[VariantOptions], choices: Mapping[str, tuple[str, ...]], given: Mapping[str, Any]
) -> Any:
    """Build the variant's option dataclass `cls`, refusing unknown names and ill-typed values."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for name, value in given.items():
        if name not in fields:
            raise RuleViolation(
                "unknown_option",
                f"{variant} has no option {name!r}; known options: {', '.join(sorted(fields))}",
                f"{variant} §5",
            )
        default = fields[name].default
        if value is None and "None" in str(fields[name].type):
            continue
        expected = type(default) if default is not None else int
        if type(value) is not expected:  # bool is not accepted for an int and vice versa
            raise RuleViolation(
                "bad_option_value",
                f"option {name!r} takes a {expected.__name__}, got {value!r}",
                f"{variant} §5",
            )
        if name in choices and value not in choices[name]:
            raise RuleViolation(
                "bad_option_value",
                f"option {name!r} must be one of {', '.join(choices[name])}, got {value!r}",
                f"{variant} §5",
            )
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            raise RuleViolation("bad_option_value", f"option {name!r} must not be negative", f"{variant} §5")
    return cls(**given)


def check_players(variant: str, seats: range, players: int) -> None:
    """Refuse a table size outside `seats` (a variant's `players`, or what its options seat)."""
    if type(players) is not int or players not in seats:
        raise RuleViolation(
            "bad_player_count",
            f"{variant} is played by {seats.start} to {seats[-1]} players, not {players!r}",
            f"{variant} {CITATIONS[variant]['players']}",
        )
