"""`legal_actions`: every move a seat may make now, each accepted by `decide`.

Draw and discard choices are complete; melds come from `find_melds` (and greedy opening packings),
layoffs are single cards at each open end, swaps give the exact card(s) needed. The commands are
immutable values, built once and reused (`lay_meld_action`, `lay_off_action`, the tables below).
"""

from __future__ import annotations

from typing import Final

from rummy_rules.cards import CARD_BY_CODE, JOKER, Card
from rummy_rules.checks import check_rest
from rummy_rules.commands import Command, Discard, DrawFromStock, LayMelds, LayOff, SwapJoker, TakeDiscard
from rummy_rules.errors import RuleViolation
from rummy_rules.events import JokerSwapped
from rummy_rules.evolve import evolve, set_at, without, without_one
from rummy_rules.melds import LOW, End, Meld, find_melds, swap_joker
from rummy_rules.memo import remember
from rummy_rules.openings import opens_with
from rummy_rules.rules import ALL_BUT_TOP, MELD_ALL
from rummy_rules.secret import PROBE
from rummy_rules.state import DRAW, PLAY, SEATS, GameState
from rummy_rules.table_index import table_index
from rummy_rules.turn import decide_command
from rummy_rules.variant import REGISTRY


def legal_actions(state: GameState, seat: int) -> tuple[Command, ...]:
    """Every move `seat` may make now, with meld choices limited to a bounded useful set.

    Draw and discard choices are complete; melds come from `find_melds` (and greedy opening
    packings), layoffs are single cards at each open end, swaps give the exact card(s) needed.
    Every action returned is accepted by `decide`.
    """
    rules = state.rules
    variant = REGISTRY[rules.variant]
    if seat != state.turn:
        return variant.out_of_turn_actions(state, seat)
    phase = state.phase
    if phase is DRAW:
        return variant.draw_actions(state, seat)
    if phase is not PLAY:
        return ()
    hand = state.hands[seat]
    actions: list[Command] = []
    taken = state.taken
    if not (rules.discard_draw_must_open and state.took_unopened and not state.opened[seat]):
        going_out_by_discard = len(hand) == 1
        if not (going_out_by_discard and rules.going_out is MELD_ALL):
            discards = _DISCARDS[seat]
            barred = taken if taken is not None and hand.count(taken) == 1 else None  # kalooki / rummy40 D8
            distinct = dict.fromkeys(hand)  # copies once, in hand order
            if barred is not None:
                del distinct[barred]
            actions = list(map(discards.__getitem__, distinct))
    if not state.opened[seat]:
        unopened = variant.unopened_actions(state, seat)
        if unopened is not None:
            actions.extend(unopened)
            return tuple(actions)
    if variant.melds_after_opening:
        for meld in find_melds(hand, rules):
            # Only a meld leaving at most one card may leave a hand that cannot finish the turn.
            if len(hand) - len(meld.cards) <= 1:
                try:
                    check_rest(state, seat, without(hand, meld.cards), (*state.melds, meld))
                except RuleViolation:
                    continue
            actions.append(lay_meld_action(seat, meld))
    actions.extend(_table_actions(state, seat, hand))
    return tuple(actions)


_DRAW_CACHE: Final[dict[int, tuple[Command, ...]]] = {}


# Discard commands are immutable values; building them once per seat and card saves the hot path.
_DISCARDS: Final = tuple({card: Discard(seat, card) for card in CARD_BY_CODE} for seat in SEATS)


_LAY_MELD_MEMO: Final[dict[tuple[int, int], tuple[Meld, LayMelds]]] = {}


def lay_meld_action(seat: int, meld: Meld) -> LayMelds:
    """The command laying one candidate meld; find_melds memoises melds, so these repeat."""
    key = (seat, id(meld))
    entry = _LAY_MELD_MEMO.get(key)
    if entry is not None and entry[0] is meld:
        return entry[1]
    command = LayMelds(seat, (meld.cards,), (meld.kind,))
    remember(_LAY_MELD_MEMO, key, (meld, command))
    return command


_LAY_OFF_MEMO: Final[dict[tuple[int, int, Card, int], LayOff]] = {}


def lay_off_action(seat: int, meld: int, card: Card, at: End | None) -> LayOff:
    """The command laying one card off; a few thousand exist, and a frozen dataclass is slow to build."""
    key = (seat, meld, card, 0 if at is None else 1 if at is LOW else 2)  # an Enum hashes slowly
    command = _LAY_OFF_MEMO.get(key)
    if command is None:
        command = remember(_LAY_OFF_MEMO, key, LayOff(seat, meld, (card,), at))
    return command


# Draw commands, built once per seat.
DRAW_FROM_STOCK: Final = tuple(DrawFromStock(seat) for seat in SEATS)
TAKE_DISCARD: Final = tuple(TakeDiscard(seat) for seat in SEATS)


def draw_actions(state: GameState, seat: int) -> tuple[Command, ...]:
    if state.rules.reshuffle is ALL_BUT_TOP and not state.stock:
        # contract D16: drawing from the empty stock reshuffles (or ends the round).
        return (DrawFromStock(seat), TakeDiscard(seat)) if state.discard else (DrawFromStock(seat),)
    can_take = bool(state.discard)
    if can_take and state.rules.discard_draw_must_open and not state.opened[seat]:
        can_take = opens_with(state, seat, state.discard[-1])
    key = seat * 4 + bool(state.stock) * 2 + can_take
    actions = _DRAW_CACHE.get(key)
    if actions is None:
        built: list[Command] = []
        if state.stock:
            built.append(DrawFromStock(seat))
        if can_take:
            built.append(TakeDiscard(seat))
        actions = remember(_DRAW_CACHE, key, tuple(built))
    return actions


def _layoff_actions(state: GameState, seat: int, hand: tuple[Card, ...]) -> list[LayOff]:
    """Single-card layoffs onto every meld the seat may build on, in table order, off the table index."""
    rules = state.rules
    actions: list[LayOff] = []
    short = len(hand) <= 2  # only then can a layoff leave a hand that cannot finish the turn
    owners = state.owners
    others = rules.layoff_on_others
    held = set(hand)
    for meld_index, options in enumerate(table_index(state.melds, rules).options):
        if held.isdisjoint(options.cards) or (not others and owners[meld_index] != seat):
            continue
        for card, at, result in options.layoffs:
            if card not in held:
                continue
            if short:
                try:
                    check_rest(state, seat, without_one(hand, card), set_at(state.melds, meld_index, result))
                except RuleViolation:
                    continue
            actions.append(lay_off_action(seat, meld_index, card, at))
    return actions


def _table_actions(state: GameState, seat: int, hand: tuple[Card, ...]) -> list[Command]:
    """Layoffs (`_layoff_actions`) and joker swaps, read off the table index."""
    actions: list[Command] = list(_layoff_actions(state, seat, hand))
    rules = state.rules
    swaps = table_index(state.melds, rules).swaps()
    if not swaps:
        return actions
    in_hand = set(hand)
    for meld_index, cards in swaps:
        if not all(card in in_hand for card in cards):
            continue
        use: LayMelds | LayOff | None = None
        if rules.freed_joker_must_be_used:
            result = swap_joker(state.melds[meld_index], cards, rules)
            uses = _joker_uses(evolve(state, JokerSwapped(seat, meld_index, cards, result)), seat)
            if not uses:
                continue
            use = uses[0]
        action = SwapJoker(seat, meld_index, cards, use)
        try:
            decide_command(
                state, action, PROBE
            )  # swaps are rare; checking them whole keeps legal_actions exact
        except RuleViolation:
            continue
        actions.append(action)
    return actions


def _joker_uses(state: GameState, seat: int) -> list[LayMelds | LayOff]:
    hand = state.hands[seat]
    layoffs = _layoff_actions(state, seat, hand)
    uses: list[LayMelds | LayOff] = [a for a in layoffs if JOKER in a.cards]
    for meld in find_melds(hand, state.rules):
        if JOKER in meld.cards:
            uses.append(LayMelds(seat, (meld.cards,), (meld.kind,)))
    return uses
