"""Variant rules as data: each spec's house-rule options (§5) and the engine parameters they imply.

`rules_for(variant, players, **options)` is the only way in: it checks the variant id, the table
size and every option, and returns a frozen `Rules` that the meld and game code read. Options keep
their spec names so an operator can copy them from the spec tables unchanged.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from rummy_rules.errors import RuleViolation

VARIANTS: Final = ("kalooki", "rummy40", "rummy500", "contract")
PLAYABLE_VARIANTS: Final = VARIANTS


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


@dataclass(frozen=True, slots=True)
class KalookiOptions:
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
class Rummy40Options:
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
class Rummy500Options:
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
class ContractOptions:
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


VariantOptions = KalookiOptions | Rummy40Options | Rummy500Options | ContractOptions

_CHOICES: Final[dict[str, tuple[str, ...]]] = {
    "discard_draw_before_opening": ("free", "must_use_in_opening"),
    "match_mode": ("single_deal", "elimination"),
    "exhausted_stock": ("continue_with_discards_then_end", "end_immediately", "reshuffle_discards"),
    "fourth_buy": ("penalty", "reject"),
}


def _pip_penalties(ace: int, joker: int) -> tuple[int, ...]:
    """Penalty per rank index (0 = joker, 1 = ace ... 13 = king): pips face value, J/Q/K 10."""
    return (joker, ace, *range(2, 11), 10, 10, 10)


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
        return f"{self.variant} {_CITATIONS[self.variant].get(key, '')}".rstrip()


_CITATIONS: Final[dict[str, dict[str, str]]] = {
    "kalooki": {
        "set": "§3.5.1 D4",
        "run": "§3.5.2 D5",
        "joker": "§3.5.3 D6",
        "ambiguous": "§3.5.3 vectors/FORMAT.md",
        "opening": "§3.6 D7",
        "open_first": "§3.6.4 D9",
        "layoff": "§3.7 src ¶11",
        "layoff_set": "§3.7.1 D20 D23",
        "layoff_run": "§3.7.3 D5",
        "owner": "§3.5.4",
        "swap": "§3.8 src ¶12-¶16",
        "swap_use": "§3.8 D10",
        "swap_set2": "§3.8.3 D11",
        "closed": "§3.8.4 src ¶13",
        "keep_card": "§3.9.2 src ¶18",
        "taken": "§3.4.3 D8",
        "turn": "§3.4 §3.14",
        "draw": "§3.4.1 src ¶7",
        "discard": "§3.4.3 src ¶9",
        "hand": "§3.14",
        "penalty": "§3.12 src ¶20 D15",
        "kalooki": "§3.10 D14",
        "reshuffle": "§3.11 D18",
        "over": "§3.9.3 src ¶18",
        "discard_draw": "§5 discard_draw_before_opening D19",
        "prize": "§3.13.2 D17",
        "players": "§3.1 D1",
    },
    "rummy40": {
        "set": "§3.5.1 D4",
        "run": "§3.5.2 D5",
        "joker": "§3.5.3 D6",
        "ambiguous": "§3.5.3 vectors/FORMAT.md",
        "opening": "§3.6 src S9 D7",
        "open_first": "§3.6.3 src S15",
        "layoff": "§3.7 src S15",
        "layoff_set": "§3.7.2",
        "layoff_run": "§3.7.2 D5",
        "owner": "§3.7.1 src S15 D9",
        "swap": "§3.8 src S15",
        "swap_use": "§3.8 D10",
        "swap_set2": "§3.8.2",
        "closed": "§3.8.2",
        "keep_card": "§3.9 D11",
        "go_out": "§3.9.2 src S17 D11",
        "taken": "§3.4.3 D8",
        "turn": "§3.4 §3.13",
        "draw": "§3.4.1 src S6",
        "discard": "§3.4.3 src S5-S6",
        "hand": "§3.13",
        "penalty": "§3.11 src S20 D13",
        "reshuffle": "§3.10 src S16 D12",
        "over": "§3.9.1 src S17",
        "match": "§3.12 D14",
        "players": "§3.1 D1",
    },
    "rummy500": {
        "set": "§3.4.1 D4",
        "run": "§3.4.2 src ¶18",
        "joker": "§3.4 D2",
        "ambiguous": "§3.4 vectors/FORMAT.md",
        "players": "§3.1 D1",
        "penalty": "§3.2 D3",
        "layoff": "§3.7 src ¶18 D20",
        "layoff_set": "§3.7.1",
        "layoff_run": "§3.7.1 src ¶18",
        "owner": "§3.5.2 D20",
        "swap": "§3.4 D2",
        "keep_card": "§3.5.3 D6",
        "taken": "§3.5.3 src ¶17",
        "pick": "§3.6 src ¶17 D7 D21",
        "turn": "§3.5",
        "draw": "§3.5.1 src ¶16",
        "discard": "§3.5.3 D6",
        "hand": "§3.5",
        "reshuffle": "§3.8.2 D10",
        "over": "§3.8.1 src ¶9",
        "go_out": "§3.8.1 D9",
        "match": "§3.10 src ¶11 D13",
    },
    "contract": {
        "set": "§3.5.2 D4",
        "run": "§3.5.1 src ¶15-¶16",
        "joker": "§3.5.3 D5",
        "ambiguous": "§3.5.3 vectors/FORMAT.md",
        "players": "§3.1 D1",
        "penalty": "§3.2 src ¶45-¶49",
        "contract": "§3.8 D7",
        "open_first": "§3.9.1 src ¶20",
        "layoff": "§3.9.2 src ¶20",
        "layoff_set": "§3.9.2 D4",
        "layoff_run": "§3.9.2 src ¶16",
        "owner": "§3.9.2 D8",
        "swap": "§3.9.3 src ¶20",
        "swap_use": "§3.9.3 D9",
        "closed": "§3.9.3 src ¶20",
        "keep_card": "§3.6.3 D10",
        "go_out": "§3.10 D10",
        "taken": "§3.6.3",
        "turn": "§3.6 §3.15",
        "draw": "§3.6.1 D23",
        "discard": "§3.6.3",
        "hand": "§3.15",
        "buy": "§3.7 src ¶21-¶26 D12",
        "round8": "§3.11 src ¶30-¶32 D11",
        "reshuffle": "§3.12 D16",
        "over": "§3.10.1",
        "match": "§3.13.3 src ¶44 D18",
    },
}

_OPTION_TYPES: Final[dict[str, type[Any]]] = {
    "kalooki": KalookiOptions,
    "rummy40": Rummy40Options,
    "rummy500": Rummy500Options,
    "contract": ContractOptions,
}


def _options(variant: str, given: dict[str, Any]) -> Any:
    """Build the variant's option dataclass, refusing unknown names and ill-typed values."""
    cls = _OPTION_TYPES[variant]
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
        if name in _CHOICES and value not in _CHOICES[name]:
            raise RuleViolation(
                "bad_option_value",
                f"option {name!r} must be one of {', '.join(_CHOICES[name])}, got {value!r}",
                f"{variant} §5",
            )
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            raise RuleViolation("bad_option_value", f"option {name!r} must not be negative", f"{variant} §5")
    return cls(**given)


def _player_range(variant: str, low: int, high: int, players: int) -> None:
    if type(players) is not int or not low <= players <= high:
        raise RuleViolation(
            "bad_player_count",
            f"{variant} is played by {low} to {high} players, not {players!r}",
            f"{variant} {_CITATIONS[variant]['players']}",
        )


def rules_for(variant: str, players: int, **options: Any) -> Rules:
    """The rules of `variant` for `players` players with the given house-rule options."""
    if variant not in VARIANTS:
        raise RuleViolation("unknown_variant", f"no variant {variant!r}; known: {', '.join(VARIANTS)}")
    opts = _options(variant, options)
    if isinstance(opts, KalookiOptions):
        return _kalooki(players, opts)
    if isinstance(opts, Rummy40Options):
        return _rummy40(players, opts)
    if isinstance(opts, Rummy500Options):
        return _rummy500(players, opts)
    return _contract(players, opts)


def _kalooki(players: int, o: KalookiOptions) -> Rules:
    _player_range("kalooki", 2, 5, players)  # kalooki D1
    if o.match_mode == "elimination" and o.prize_pool:
        raise RuleViolation(
            "bad_option_value",
            "the prize-pool split is defined per single deal; it cannot be combined with elimination",
            "kalooki §3.13 D16 D17",
        )
    if not 0 <= o.prize_winner_min_pct <= 100:
        raise RuleViolation("bad_option_value", "prize_winner_min_pct must be 0 to 100", "kalooki §5")
    return Rules(
        variant="kalooki",
        players=players,
        packs=2,  # src ¶2
        jokers=2,
        hand_size=13,  # src ¶1
        upcard=True,  # src ¶5
        set_min=3,
        set_max=4,  # D4
        natural_set_distinct_suits=not o.allow_repeated_suits_in_natural_sets,
        joker_set_distinct_suits=True,  # src ¶11
        run_min=3,
        ace_low_in_runs=o.ace_low_in_runs,
        ace_low_value=1,  # D3
        ace_high_value=11,
        ace_set_value=11,
        penalty=_pip_penalties(11, o.joker_penalty),  # src ¶20, D15
        opening_min_points=o.opening_min_points,  # D7
        opening_single_meld=False,
        open_before_layoff=True,  # §3.7
        layoff_on_others=True,  # src ¶11
        joker_swap=JokerSwap.KALOOKI,
        freed_joker_must_be_used=o.freed_joker_must_be_used_same_turn,  # D10
        going_out=GoingOut.DISCARD_REQUIRED,  # src ¶18
        reshuffle=Reshuffle.KEEP_LAST_DISCARD,  # D18
        kalooki_surcharge=o.kalooki_surcharge,
        kalooki_exempt_from_opening=o.kalooki_exempt_from_opening,  # D14
        discard_draw_must_open=o.discard_draw_before_opening == "must_use_in_opening",  # D19
        match_mode=MatchMode(o.match_mode),
        deals=1,
        elimination_limit=o.elimination_limit,
        prize_pool=o.prize_pool,
        options=o,
        stalemate_reshuffles=o.stalemate_reshuffles,
    )


def default_rummy40_deals(players: int) -> int:
    """Smallest multiple of the table size that is at least 5 (rummy40 §3.12, D14)."""
    return -(-5 // players) * players


def _rummy40(players: int, o: Rummy40Options) -> Rules:
    _player_range("rummy40", 2, 6, players)  # rummy40 D1
    packs = o.packs if o.packs is not None else (1 if players <= 3 else 2)
    if packs not in (1, 2) or packs * 54 - 13 * players < 2:
        message = f"{packs} pack(s) cannot serve {players} players"
        raise RuleViolation("bad_option_value", message, "rummy40 D1")
    deals = o.deals_per_match if o.deals_per_match is not None else default_rummy40_deals(players)
    if deals < 1:
        raise RuleViolation("bad_option_value", "deals_per_match must be at least 1", "rummy40 §3.12")
    repeated = o.allow_repeated_suits_in_sets
    return Rules(
        variant="rummy40",
        players=players,
        packs=packs,
        jokers=2 * packs,  # D1
        hand_size=13,  # src S2
        upcard=False,  # §3.3.3
        set_min=3,
        set_max=4,  # src S10
        natural_set_distinct_suits=not repeated,  # D4
        joker_set_distinct_suits=not repeated,
        run_min=3,  # src S11
        ace_low_in_runs=True,
        ace_low_value=1,  # src S12
        ace_high_value=11,
        ace_set_value=11,  # D3
        penalty=_pip_penalties(11, o.joker_penalty),  # src S20, D13
        opening_min_points=o.opening_min_points,
        opening_single_meld=o.opening_single_meld,  # D7
        open_before_layoff=True,  # src S15
        layoff_on_others=o.layoff_on_others,  # D9
        joker_swap=JokerSwap.REPRESENTED,
        freed_joker_must_be_used=o.exchanged_joker_must_be_used_same_turn,  # D10
        going_out=GoingOut.EITHER if o.go_out_by_discard else GoingOut.MELD_ALL,  # D11
        reshuffle=Reshuffle.ALL_AT_ONCE,  # D12
        kalooki_surcharge=0,
        kalooki_exempt_from_opening=False,  # D16
        discard_draw_must_open=False,
        match_mode=MatchMode.FIXED_DEALS,
        deals=deals,
        elimination_limit=0,
        prize_pool=0,
        options=o,
        stalemate_reshuffles=o.stalemate_reshuffles,
    )


_RUMMY500_STOCK: Final = {
    "continue_with_discards_then_end": Reshuffle.NONE_END_DEAL,
    "end_immediately": Reshuffle.END_IMMEDIATELY,
    "reshuffle_discards": Reshuffle.ALL_BUT_TOP,
}


def _rummy500(players: int, o: Rummy500Options) -> Rules:
    _player_range("rummy500", 2, 8 if o.packs == 2 else 6, players)  # D1
    if o.packs not in (1, 2):
        raise RuleViolation("bad_option_value", "rummy500 is played with 1 or 2 packs", "rummy500 D1")
    if o.target_score < 1:
        raise RuleViolation("bad_option_value", "target_score must be positive", "rummy500 §5")
    dealt = o.cards_dealt if o.cards_dealt is not None else (13 if players == 2 else 7)  # src ¶13
    if dealt < 1 or dealt * players > 52 * o.packs + o.jokers - 2:
        raise RuleViolation(
            "bad_option_value", f"cannot deal {dealt!r} cards to {players} players", "rummy500 §5"
        )
    return Rules(
        variant="rummy500",
        players=players,
        packs=o.packs,
        jokers=o.jokers,
        hand_size=dealt,
        upcard=True,
        set_min=3,
        set_max=4,
        natural_set_distinct_suits=o.packs > 1,  # D4
        joker_set_distinct_suits=o.packs > 1,
        run_min=3,
        ace_low_in_runs=True,
        ace_low_value=1,  # §3.2 D3
        ace_high_value=15,
        ace_set_value=15,
        penalty=_pip_penalties(15, 15),  # D3; option jokers: 15 each
        opening_min_points=0,  # D19
        opening_single_meld=False,
        open_before_layoff=False,  # D19: no precondition for melding or laying off
        layoff_on_others=True,  # D20
        joker_swap=JokerSwap.NONE,
        freed_joker_must_be_used=False,
        going_out=GoingOut.DISCARD_REQUIRED if o.going_out_requires_discard else GoingOut.EITHER,
        reshuffle=_RUMMY500_STOCK[o.exhausted_stock],  # D10
        kalooki_surcharge=0,
        kalooki_exempt_from_opening=False,
        discard_draw_must_open=False,
        match_mode=MatchMode.TARGET_SCORE,
        deals=o.target_score,  # the score that ends the game (§3.10)
        elimination_limit=0,
        prize_pool=0,
        options=o,
        stalemate_reshuffles=o.stalemate_reshuffles,
    )


def _contract(players: int, o: ContractOptions) -> Rules:
    _player_range("contract", 2, 7, players)  # one table: 2-7 (§3.1)
    packs = 2 if players <= 4 else (o.packs_for_5_players if players == 5 else 3)  # D1
    if packs not in (2, 3):
        raise RuleViolation("bad_option_value", "packs_for_5_players must be 2 or 3", "contract D1")
    if o.max_buys_per_round > 4 or o.min_natural_cards_per_meld < 1:
        raise RuleViolation(
            "bad_option_value",
            "max_buys_per_round is at most 4; melds need a natural card",
            "contract §5 D5 D13",
        )
    if not 1 <= o.first_round <= o.last_round <= 8:
        raise RuleViolation(
            "bad_option_value",
            f"first_round and last_round must satisfy 1 <= first_round <= last_round <= 8, "
            f"got {o.first_round} and {o.last_round}",
            "contract §3.4",
        )
    if o.first_dealer is not None and not o.first_dealer < players:
        raise RuleViolation(
            "bad_option_value",
            f"first_dealer is a seat from 0 to {players - 1}, got {o.first_dealer}",
            "contract §3.14.4 D2",
        )
    return Rules(
        variant="contract",
        players=players,
        packs=packs,
        jokers=2 * packs,  # src ¶12
        hand_size=13,
        upcard=True,
        set_min=3,
        set_max=0,  # threes have no maximum (D4)
        natural_set_distinct_suits=False,
        joker_set_distinct_suits=False,
        run_min=4,  # src ¶15
        ace_low_in_runs=True,
        ace_low_value=0,  # contract melds carry no value
        ace_high_value=0,
        ace_set_value=0,
        penalty=(20, 15, 5, 5, 5, 5, 5, 5, 5, 10, 10, 10, 10, 10),  # src ¶45-¶49
        opening_min_points=0,
        opening_single_meld=False,
        open_before_layoff=True,  # src ¶20: lay down the contract first
        layoff_on_others=True,  # D8
        joker_swap=JokerSwap.RUNS_ONLY,
        freed_joker_must_be_used=False,
        going_out=GoingOut.EITHER if o.closing_by_discard else GoingOut.MELD_ALL,
        reshuffle=Reshuffle.ALL_BUT_TOP,
        kalooki_surcharge=0,
        kalooki_exempt_from_opening=False,
        discard_draw_must_open=False,
        match_mode=MatchMode.CONTRACT_ROUNDS,
        deals=o.last_round,  # src ¶1: eight rounds, unless the game plays fewer
        elimination_limit=0,
        prize_pool=0,
        options=o,
        stalemate_reshuffles=o.stalemate_reshuffles,
        first_deal=o.first_round,
        first_dealer=o.first_dealer,
    )
