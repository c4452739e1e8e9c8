"""Opening meld groups: a bounded set of greedy packings of a hand that reach the opening minimum."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from rummy_rules.cards import CARD_BY_CODE, Card
from rummy_rules.checks import check_rest
from rummy_rules.commands import LayMelds
from rummy_rules.errors import RuleViolation
from rummy_rules.melds import Meld, find_melds, meld_value
from rummy_rules.memo import remember
from rummy_rules.rules import Rules
from rummy_rules.state import GameState

# Highest meld value a card of each rank can take (index 0: a joker may stand for an ace).
_MAX_MELD_VALUE: Final = (11, 11, *range(2, 11), 10, 10, 10)


_OPENING_STARTS: Final = 6  # packings tried from the best candidates: bounded, and enough to open


def openings(state: GameState, hand: Sequence[Card], must_include: Card | None = None) -> list[LayMelds]:
    """A bounded set of opening meld groups from `hand`: greedy packings that reach the minimum.

    For each candidate meld (best first), add disjoint candidates in value order until the opening
    minimum is met; also the packing that would leave one card (a Kalooki, kalooki D14).
    """
    rules = state.rules
    seat = state.turn
    candidates = find_melds(hand, rules)
    if not candidates:
        return []
    needs = sorted((_meld_facts(meld, rules) for meld in candidates), key=_by_value)
    minimum = rules.opening_min_points
    # Cheap bound first: a packing of disjoint candidates is worth at most the cards they cover
    # (each copy once, at most 11 each) and uses at most those cards (a Kalooki needs all but one).
    # Counts per card code; a candidate never holds the same code twice (find_melds: distinct
    # suits in sets, distinct ranks in runs, at most one joker), so a check is one lookup per card.
    held = [0] * len(CARD_BY_CODE)
    for card in hand:
        held[card.code] += 1
    covered = {card for meld in candidates for card in meld.cards}
    bound = sum(_MAX_MELD_VALUE[card.rank] * held[card.code] for card in covered)
    could_kalooki = (
        rules.kalooki_exempt_from_opening and sum(held[card.code] for card in covered) >= len(hand) - 1
    )
    if bound < minimum and not could_kalooki:
        return []
    found: dict[tuple[tuple[Card, ...], ...], LayMelds] = {}
    starts = [i for i, (_, meld, _) in enumerate(needs) if must_include is None or must_include in meld.cards]
    for start_index in starts[:_OPENING_STARTS]:
        first_value, first, first_codes = needs[start_index]
        pool = held.copy()
        for code in first_codes:
            pool[code] -= 1
        left = len(hand) - len(first_codes)
        chosen = [first]
        total = first_value
        if not rules.opening_single_meld:
            for index, (value, meld, codes) in enumerate(needs):
                if total >= minimum and left > 1:
                    break
                if index == start_index:
                    continue
                for code in codes:
                    if not pool[code]:
                        break
                else:  # every card of the candidate is still free (a loop, not all(): hot path)
                    for code in codes:
                        pool[code] -= 1
                    left -= len(codes)
                    chosen.append(meld)
                    total += value
        kalooki_turn = rules.kalooki_exempt_from_opening and left == 1
        if (first_value if rules.opening_single_meld else total) < minimum and not kalooki_turn:
            continue
        key = tuple(meld.cards for meld in chosen)
        if key in found:
            continue
        if left <= 1:
            rest = tuple(CARD_BY_CODE[code] for code, count in enumerate(pool) for _ in range(count))
            try:
                check_rest(state, seat, rest, state.melds + tuple(chosen))
            except RuleViolation:
                continue
        found[key] = LayMelds(seat, key, tuple(meld.kind for meld in chosen))
    return list(found.values())


_MeldFacts = tuple[int, Meld, tuple[int, ...]]
_MELD_FACTS: Final[dict[int, tuple[Rules, _MeldFacts]]] = {}


def _meld_facts(meld: Meld, rules: Rules) -> _MeldFacts:
    """(meld value, meld, card codes) of a candidate; find_melds memoises melds, so these repeat."""
    entry = _MELD_FACTS.get(id(meld))
    if entry is not None and entry[0] is rules and entry[1][1] is meld:
        return entry[1]
    facts = (meld_value(meld, rules), meld, tuple(card.code for card in meld.cards))
    remember(_MELD_FACTS, id(meld), (rules, facts))
    return facts


def _by_value(facts: _MeldFacts) -> int:
    return -facts[0]


def opens_with(state: GameState, seat: int, card: Card) -> bool:
    """Whether `seat` could open this turn with `card` taken from the discard pile (kalooki D19
    option `must_use_in_opening`), judged as after the take: an opening whose last card left is a
    copy of `card` is no way out, that discard is refused (D8), so the take would leave no move."""
    return bool(openings(state._replace(taken=card), (*state.hands[seat], card), card))
