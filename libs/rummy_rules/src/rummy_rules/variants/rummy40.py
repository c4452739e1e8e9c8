"""Rummy 40 (spec: rules/rummy40): 2-6 players, one or two packs, a fixed number of deals.

What differs from the standard play (`base.StandardVariant`) is data only: no upcard, melds laid
only onto one's own melds unless option layoff_on_others, going out by melding every card (D11),
every face-up card becoming the stock as soon as it runs out (D12), and the match over after
`deals_per_match` deals, fewest points winning (§3.12 D14), which is the standard match end. A
stalled deal is void (§3.10, meldstream M1). Options and defaults: `options.Rummy40Options`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from rummy_rules.errors import RuleViolation
from rummy_rules.options import Rummy40Options
from rummy_rules.rules import (
    GoingOut,
    JokerSwap,
    MatchMode,
    Reshuffle,
    Rules,
    check_players,
    parse_options,
    pip_penalties,
)
from rummy_rules.variants.base import StandardVariant

CITATIONS: Final[Mapping[str, str]] = {
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
    "forfeit": "D17",  # meldstream M3
}


def default_rummy40_deals(players: int) -> int:
    """Smallest multiple of the table size that is at least 5 (rummy40 §3.12, D14)."""
    return -(-5 // players) * players


class Rummy40(StandardVariant):
    id = "rummy40"
    players = range(2, 7)  # rummy40 D1
    citations = CITATIONS
    voids_unwon_deals = True

    def rules(self, players: int, options: Mapping[str, Any]) -> Rules:
        o: Rummy40Options = parse_options(self.id, Rummy40Options, {}, options)
        check_players(self.id, self.players, players)
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
            penalty=pip_penalties(11, o.joker_penalty),  # src S20, D13
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


RUMMY40: Final = Rummy40()
