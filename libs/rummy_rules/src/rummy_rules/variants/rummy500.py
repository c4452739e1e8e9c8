"""Rummy 500 (spec: rules/rummy500): 2-8 players, melds scored for whoever laid each card, to 500.

What differs from the standard play (`base.StandardVariant`): the whole discard pile is public and
a player may take any card of it with every card above, but must use that card at once in a meld or
layoff sent with the pick (§3.6 D7 D21); the deal scores the cards each seat has on the table
minus those in hand (§3.9 D12); the first to reach the target score wins and is paid the
differences (§3.10 D13 D14). Options and defaults: `options.Rummy500Options`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from rummy_rules.cards import JOKER
from rummy_rules.commands import Command, LayMelds, LayOff, PickFromPile, TakeDiscard
from rummy_rules.errors import RuleViolation
from rummy_rules.events import DealEnded, Event, GameEnded
from rummy_rules.evolve import drawn_from_pile
from rummy_rules.handlers import Entry, handles
from rummy_rules.legal import DRAW_FROM_STOCK, TAKE_DISCARD, lay_meld_action, lay_off_action
from rummy_rules.melds import BITS, find_melds, melds_of_masks
from rummy_rules.options import RUMMY500_CHOICES, Rummy500Options
from rummy_rules.rules import (
    DISCARD_REQUIRED,
    END_IMMEDIATELY,
    MELD_ALL,
    GoingOut,
    JokerSwap,
    MatchMode,
    Reshuffle,
    Rules,
    check_players,
    parse_options,
    pip_penalties,
)
from rummy_rules.rummy500_rules import credited_points, deal_score, game_winner, pile_pick, settlement
from rummy_rules.secret import PROBE, Seed, secret
from rummy_rules.state import MAX_SEATS, GameState, Phase, playing
from rummy_rules.table_index import table_index
from rummy_rules.turn import PILE_DRAWS, decide_command, take_discard
from rummy_rules.variants.base import StandardVariant

CITATIONS: Final[Mapping[str, str]] = {
    "set": "§3.4.1 D4",
    "run": "§3.4.2 src ¶18",
    "joker": "§3.4 D2",
    "ambiguous": "§3.4 vectors/FORMAT.md",
    "players": "§3.1 D1",
    "forfeit": "D22",  # meldstream M3
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
}

_RUMMY500_STOCK: Final = {
    "continue_with_discards_then_end": Reshuffle.NONE_END_DEAL,
    "end_immediately": Reshuffle.END_IMMEDIATELY,
    "reshuffle_discards": Reshuffle.ALL_BUT_TOP,
}


def _top_free(rules: Rules) -> bool:
    options = rules.options
    return isinstance(options, Rummy500Options) and options.top_discard_free


def _take_top(state: GameState, command: TakeDiscard, seed: Seed) -> list[Event]:
    """The top discard on its own: only with option top_discard_free (D7); else a pick and its use."""
    events = take_discard(state, command, seed)
    rules = state.rules
    if not _top_free(rules):
        raise RuleViolation(
            "pick_must_be_used",
            "a discard-pile card must be used at once: send the pick with the meld or layoff that uses it",
            rules.cite("pick"),
        )
    return events


def _pick(state: GameState, command: PickFromPile, seed: Seed) -> list[Event]:
    """rummy500 §3.6: take a pile card and all above it, and use it at once (D7, D21)."""
    rules = state.rules
    seat = command.seat
    if not state.stock and rules.reshuffle is END_IMMEDIATELY:
        raise RuleViolation("stock_empty", "the stock is empty: the deal is over", rules.cite("reshuffle"))
    taken = pile_pick(state.discard, command.index)
    selected = taken[0]
    then = command.then
    draws = PILE_DRAWS[seat]
    drawn = taken[::-1]  # from the top down, the selected card last
    events: list[Event] = [draws[card.code] for card in drawn]
    if then is None:
        if _top_free(rules) and len(taken) == 1:
            return events  # option top_discard_free (D7)
        raise RuleViolation(
            "pick_must_be_used",
            f"{selected.text} must be melded or laid off at once: send that meld or layoff with the pick",
            rules.cite("pick"),
        )
    if not isinstance(then, LayMelds | LayOff) or then.seat != seat:
        raise RuleViolation(
            "bad_follow_up", "the card's use must be your own meld or layoff", rules.cite("pick")
        )
    used = then.cards if isinstance(then, LayOff) else tuple(card for cards in then.melds for card in cards)
    if selected not in used:
        raise RuleViolation(
            "pick_must_be_used",
            f"the meld or layoff sent with the pick must use {selected.text}",
            rules.cite("pick"),
        )
    return [*events, *decide_command(drawn_from_pile(state, seat, drawn), then, seed)]


def _draws(state: GameState, seat: int) -> tuple[Command, ...]:
    """Stock draw (with an empty stock: ending the deal, D10) and every usable pile pick (§3.6)."""
    rules = state.rules
    actions: list[Command] = [DRAW_FROM_STOCK[seat]]
    if not state.stock and rules.reshuffle is END_IMMEDIATELY:
        return tuple(actions)
    pile = state.discard
    hand = state.hands[seat]
    if pile and _top_free(rules):
        actions.append(TAKE_DISCARD[seat])
    table = table_index(state.melds, rules)
    layoff_cards = table.layoff_cards()
    # The cards a pick at `index` would hold (the hand and pile[index:]) as masks, grown from the top
    # of the pile down: per suit the positions held (bit r for rank r, as melds.BITS), per rank the
    # suits held.
    suit_masks = [0, 0, 0, 0]
    rank_suits = [0] * 14
    for card in hand:
        suit_index, position_bit, rank, suit_bit = BITS[card.code]
        suit_masks[suit_index] |= position_bit
        rank_suits[rank] |= suit_bit
    picks: list[list[Command]] = []  # per usable pick index, from the top of the pile down
    for index in range(len(pile) - 1, -1, -1):
        selected = pile[index]
        code = selected.code
        suit_index, position_bit, rank, suit_bit = BITS[code]
        suits = rank_suits[rank] | suit_bit
        rank_suits[rank] = suits
        positions = suit_masks[suit_index] | position_bit
        suit_masks[suit_index] = positions
        entries = table.layoffs_of(selected) if selected in layoff_cards else None
        if code:
            # A new meld with the selected card (jokers aside, as melds_of_masks) is a set of three
            # of its rank's suits or a run through it of three positions in a row at least.
            two = suits & (suits - 1)
            line = positions | (positions & 2) << 13  # the ace also sits above the king
            meldable = two & (two - 1) or line & line >> 1 & line >> 2 & _RUNS_THROUGH[rank]
            if entries is None and not meldable:
                continue  # most picks: nothing to do with the card
        uses: list[LayMelds | LayOff] = (
            [lay_off_action(seat, meld, selected, at) for meld, at in entries] if entries else []
        )
        if not code:
            # A joker (option jokers): the melds find_melds makes with it from the cards held then.
            held_cards = (*hand, *pile[index:])
            uses.extend(
                lay_meld_action(seat, meld) for meld in find_melds(held_cards, rules) if JOKER in meld.cards
            )
        elif meldable:
            # Only cards of the selected card's rank or suit can share a meld with it: the melds
            # of those cards, as find_melds would find them, straight from the masks.
            uses.extend(
                lay_meld_action(seat, meld)
                for meld in melds_of_masks(rank, suits, suit_index, positions, rules)
                if selected in meld.cards
            )
        commands: list[Command] = []
        count = len(hand) + len(pile) - index  # cards held after the pick
        for use in uses:
            command = PickFromPile(seat, index, use)
            rest = count - (len(use.cards) if isinstance(use, LayOff) else len(use.melds[0]))
            if rest <= 1:  # only then may the rest be unfinishable (`_check_rest`)
                if rules.going_out is MELD_ALL:  # no rummy500 rule: ask decide
                    try:
                        decide_command(state, command, PROBE)
                    except RuleViolation:
                        continue
                elif rest == 1 and (*hand, *pile[index:]).count(selected) > 1:
                    continue  # the last card would be the one taken from the pile (src ¶17)
                elif rest == 0 and rules.going_out is DISCARD_REQUIRED:
                    continue  # option going_out_requires_discard (D9)
            commands.append(command)
        if commands:
            picks.append(commands)
    for commands in reversed(picks):  # bottom of the pile first
        actions.extend(commands)
    return tuple(actions)


# Per rank: the run positions (bits of a suit's mask, the ace at 1 and 14) that start three in a
# row through it (`_draws`' test for a run through a pile card).
_RUNS_THROUGH: Final = (
    0,
    *(
        sum(1 << start for start in range(position - 2, position + 1) if 1 <= start <= 12)
        | (1 << 12 if rank == 1 else 0)
        for rank, position in ((rank, rank) for rank in range(1, 14))
    ),
)


class Rummy500(StandardVariant):
    id = "rummy500"
    players = range(2, 7)  # D1: up to 8 with two packs
    citations = CITATIONS
    higher_is_better = True
    spread_pile = True  # src ¶14

    def rules(self, players: int, options: Mapping[str, Any]) -> Rules:
        o: Rummy500Options = parse_options(self.id, Rummy500Options, RUMMY500_CHOICES, options)
        check_players(self.id, range(2, MAX_SEATS + 1) if o.packs == 2 else self.players, players)  # D1
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
            penalty=pip_penalties(15, 15),  # D3; option jokers: 15 each
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

    def extra_handlers(self) -> Mapping[type[Command], Entry]:
        entries = (handles(PickFromPile, _pick, Phase.DRAW), handles(TakeDiscard, _take_top, Phase.DRAW))
        return dict(entries)

    draw_actions = staticmethod(_draws)  # stock draw and every usable pile pick, on every draw

    def deal_points(self, state: GameState, winner: int | None, bonus: bool) -> tuple[int, ...]:
        # §3.9 src ¶9, D12: cards credited on the table minus cards left in hand.
        rules = state.rules
        credited = credited_points(state.melds, state.credits, len(state.hands), rules)
        return tuple(
            deal_score(credited[seat], hand, rules) if alive else 0  # M3: charged at forfeit
            for seat, (hand, alive) in enumerate(zip(state.hands, state.active, strict=True))
        )

    def match_over(
        self, before: GameState, after: GameState, ended: DealEnded, seed: Seed
    ) -> list[Event] | None:
        eligible = {seat: after.totals[seat] for seat in playing(after)}  # M3: never a forfeited seat
        top = game_winner(eligible, after.rules.deals)  # §3.10, D13: highest at or above the target
        if top is None:
            return None
        return [GameEnded((top,), after.totals, _settled(after, top), secret(before, seed))]

    def forfeit_payouts(self, state: GameState, winners: tuple[int, ...]) -> tuple[int, ...]:
        return _settled(state, winners[0])


def _settled(state: GameState, top: int) -> tuple[int, ...]:
    """D14's settlement: each seat pays the winner the difference of the scores; a forfeited seat
    (meldstream M3) pays as the lowest score at the table, never less than its own difference."""
    scores = dict(enumerate(state.totals))
    lowest = min(scores.values())
    for seat in state.forfeited:
        scores[seat] = lowest
    owed = settlement(scores, top)
    return tuple(sum(owed.values()) if seat == top else -owed[seat] for seat in scores)


RUMMY500: Final = Rummy500()
