"""Kalooki (spec: rules/kalooki): 2-5 players, two packs and two jokers, one deal, a Kalooki bonus.

What differs from the standard play (`base.StandardVariant`): going out in one turn without having
opened is a Kalooki (D14, a surcharge on the losers); the match is one deal, whose winner may split a
prize pool (§3.13.2 D17), or, with option match_mode=elimination, deals until one player is left
under the limit; a stalled deal is void (§3.11.3, meldstream M1). The house-rule options and their
defaults are `options.KalookiOptions`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from rummy_rules.errors import RuleViolation
from rummy_rules.events import DealEnded, Event, GameEnded
from rummy_rules.options import KALOOKI_CHOICES, KalookiOptions
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
from rummy_rules.scoring import match_winners, prize_split
from rummy_rules.secret import Seed, secret
from rummy_rules.state import GameState, playing
from rummy_rules.variants.base import StandardVariant

CITATIONS: Final[Mapping[str, str]] = {
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
    "forfeit": "D25",  # meldstream M3
}


class Kalooki(StandardVariant):
    id = "kalooki"
    players = range(2, 6)  # kalooki D1
    citations = CITATIONS
    voids_unwon_deals = True

    def rules(self, players: int, options: Mapping[str, Any]) -> Rules:
        o: KalookiOptions = parse_options(self.id, KalookiOptions, KALOOKI_CHOICES, options)
        check_players(self.id, self.players, players)
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
            penalty=pip_penalties(11, o.joker_penalty),  # src ¶20, D15
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

    def going_out_bonus(self, state: GameState) -> bool:
        # D14: the whole hand melded in the turn that opens (not opened as it began, nothing laid
        # off or swapped in it).
        return not state.turn_start_opened and not state.extended

    def match_over(
        self, before: GameState, after: GameState, ended: DealEnded, seed: Seed
    ) -> list[Event] | None:
        rules = after.rules
        winner = ended.winner
        if rules.match_mode is MatchMode.ELIMINATION:
            alive = [seat for seat, is_alive in enumerate(after.active) if is_alive]
            if not alive:
                # meldstream M1: a scored stalemate may put every seat over the limit at once; then
                # the fewest points among those still playing win, ties share.
                in_play = [seat for seat, is_alive in enumerate(before.active) if is_alive]
                alive = match_winners(dict(enumerate(after.totals)), in_play)
            if len(alive) <= 1 or not any(after.active):
                return [GameEnded(tuple(alive), after.totals, (), secret(before, seed))]
            return None
        if winner is None:
            # meldstream M1, a scored stalemate: fewest points win, ties share (as rummy40 D14);
            # without a closer there is no prize split (§3.13.2 divides after a going out).
            totals = dict(enumerate(after.totals))
            winners = match_winners(totals, playing(after))  # meldstream M3: never a forfeited seat
            return [GameEnded(tuple(winners), after.totals, (), secret(before, seed))]
        payouts: tuple[int, ...] = ()
        if rules.prize_pool:
            # meldstream M3: a forfeited seat has no share.
            losers = {
                seat: penalty
                for seat, penalty in enumerate(ended.penalties)
                if seat != winner and seat not in after.forfeited
            }
            split = prize_split(rules.prize_pool, winner, losers, rules, ended.kalooki)
            payouts = tuple(split.get(seat, 0) for seat in range(rules.players))
        return [GameEnded((winner,), after.totals, payouts, secret(before, seed))]

    def forfeit_payouts(self, state: GameState, winners: tuple[int, ...]) -> tuple[int, ...]:
        # meldstream M3: the seat left takes the whole pool (nobody else finished the deal).
        pool = state.rules.prize_pool
        return tuple(pool if seat in winners else 0 for seat in range(len(state.active))) if pool else ()


KALOOKI: Final = Kalooki()
