"""Sets and runs: validity, values, laying off, joker retrieval and penalties, per variant `Rules`.

A run is a tuple of cards low to high; a joker stands for the card at its position, fixed when the
run is laid (kalooki D6, rummy40 §3.5.3). Positions are ranks 1..14: 1 is the low ace, 14 the high ace.
A set joker stands for a card of the set's rank in a missing suit. Every check raises `RuleViolation`
with a stable code; nothing here touches game state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from itertools import combinations, pairwise
from typing import Final

from rummy_rules.cards import JOKER, SUITS, Card, Suit
from rummy_rules.errors import RuleViolation
from rummy_rules.memo import remember
from rummy_rules.rules import JokerSwap, Rules


class MeldKind(Enum):
    SET = "set"
    RUN = "run"


class End(Enum):
    """The end of a run a joker is laid off at (vectors' `at`)."""

    LOW = "low"
    HIGH = "high"


# Enum members bound to module names: in Python 3.11 `MeldKind.RUN` takes EnumType.__getattr__'s slow
# path (~0.1 us, ten times an attribute), and meld building and layoffs test kinds and ends throughout.
RUN: Final = MeldKind.RUN
SET: Final = MeldKind.SET
LOW: Final = End.LOW
HIGH: Final = End.HIGH

# CARD_AT[suit index][position]: the natural card at a run position (14 is the ace again).
CARD_AT: Final = tuple((JOKER, *(Card(rank, suit) for rank in range(1, 14)), Card(1, suit)) for suit in SUITS)


@dataclass(frozen=True, slots=True)
class Meld:
    """A valid set or run. `rank` is the set's rank, or the position of a run's first card."""

    kind: MeldKind
    cards: tuple[Card, ...]
    rank: int
    suit: Suit | None = None

    @property
    def jokers(self) -> int:
        return sum(1 for card in self.cards if card.suit is None)

    @property
    def high(self) -> int:
        """Position of a run's last card."""
        return self.rank + len(self.cards) - 1

    def represented(self, index: int) -> Card:
        """The natural card a run joker at `index` stands for (rule: position fixed when laid)."""
        assert self.suit is not None
        return CARD_AT[SUITS.index(self.suit)][self.rank + index]

    def __str__(self) -> str:
        return " ".join(card.text for card in self.cards)


def _fail(rules: Rules, code: str, message: str, key: str) -> RuleViolation:
    return RuleViolation(code, message, rules.cite(key))


def make_meld(cards: Sequence[Card], rules: Rules, kind: MeldKind | None = None) -> Meld:
    """Validate `cards` as a meld of `kind` (inferred when None) and return it.

    A group with one natural card and jokers can read as a set or a run; then `kind` is required
    (vectors/FORMAT.md: such cases carry a type), since the jokers would stand for different cards.
    """
    cards = tuple(cards)
    naturals = [card for card in cards if card.suit is not None]
    if not naturals:
        raise _fail(rules, "meld_without_natural", "a meld needs at least one natural card", "joker")
    if not rules.jokers and len(naturals) < len(cards):
        raise _fail(rules, "no_jokers", "this game is played without jokers", "joker")  # rummy500 D2
    if kind is SET:
        return _as_set(cards, naturals, rules)
    if kind is RUN:
        return _as_run(cards, naturals, rules)
    same_rank = all(card.rank == naturals[0].rank for card in naturals)
    same_suit = all(card.suit is naturals[0].suit for card in naturals)
    if same_rank and not same_suit:
        return _as_set(cards, naturals, rules)
    if same_suit and not same_rank:
        return _as_run(cards, naturals, rules)
    if not same_rank:
        raise _fail(
            rules,
            "not_a_meld",
            f"{_text(cards)} is neither a set (one rank) nor a run (one suit)",
            "set",
        )
    # One rank and one suit: one natural (or copies of one card): try both readings.
    found: list[Meld] = []
    errors: list[RuleViolation] = []
    for build in (_as_set, _as_run):
        try:
            found.append(build(cards, naturals, rules))
        except RuleViolation as exc:
            errors.append(exc)
    if len(found) == 2:
        raise _fail(
            rules,
            "ambiguous_meld",
            f"{_text(cards)} could be a set or a run; say which (the jokers stand for different cards)",
            "ambiguous",
        )
    if found:
        return found[0]
    raise errors[0]


def _text(cards: Sequence[Card]) -> str:
    return " ".join(card.text for card in cards)


def _as_set(cards: tuple[Card, ...], naturals: list[Card], rules: Rules) -> Meld:
    rank = naturals[0].rank
    if any(card.rank != rank for card in naturals):
        raise _fail(rules, "set_mixed_ranks", f"{_text(cards)}: a set needs cards of one rank", "set")
    size = len(cards)
    if size < rules.set_min:
        raise _fail(rules, "meld_too_short", f"a set needs at least {rules.set_min} cards", "set")
    if rules.set_max and size > rules.set_max:
        raise _fail(rules, "set_too_large", f"a set can have at most {rules.set_max} cards", "set")
    jokers = size - len(naturals)
    distinct = rules.joker_set_distinct_suits if jokers else rules.natural_set_distinct_suits
    if distinct:
        suits = {card.suit for card in naturals}
        if len(suits) != len(naturals):
            raise _fail(rules, "set_repeated_suit", f"{_text(cards)}: a set may not repeat a suit", "set")
        if len(suits) + jokers > 4:
            raise _fail(rules, "set_too_large", "set jokers must stand for missing suits", "set")
    return Meld(SET, cards, rank)


def _as_run(cards: tuple[Card, ...], naturals: list[Card], rules: Rules) -> Meld:
    suit = naturals[0].suit
    if any(card.suit is not suit for card in naturals):
        raise _fail(rules, "run_mixed_suits", f"{_text(cards)}: a run needs cards of one suit", "run")
    size = len(cards)
    if size < rules.run_min:
        raise _fail(rules, "meld_too_short", f"a run needs at least {rules.run_min} cards", "run")
    if size > 13:
        raise _fail(rules, "run_too_long", "a run has at most 13 cards", "run")
    first = next(i for i, card in enumerate(cards) if card.suit is not None)
    rank = cards[first].rank
    lows = (1 - first, 14 - first) if rank == 1 else (rank - first,)
    lowest = 1 if rules.ace_low_in_runs else 2
    assert suit is not None
    line = CARD_AT[SUITS.index(suit)]
    for low in lows:
        if low < lowest or low + size - 1 > 14:
            continue
        if all(card.suit is None or card is line[low + i] for i, card in enumerate(cards)):
            return Meld(RUN, cards, low, suit)
    raise _fail(
        rules,
        "not_a_run",
        f"{_text(cards)} is not a run: cards must be consecutive, low to high, ace only at one end,"
        " no wrap-around" + ("" if rules.ace_low_in_runs else ", and the ace only high"),
        "run",
    )


def _position_values(rules: Rules) -> tuple[int, ...]:
    # kalooki D3 / rummy40 src S12 D15: low ace 1, high ace 11; J/Q/K 10.
    return (0, rules.ace_low_value, *range(2, 11), 10, 10, 10, rules.ace_high_value)


def meld_value(meld: Meld, rules: Rules) -> int:
    """Points of a meld on the table: jokers count as the card they stand for (kalooki src ¶4)."""
    if meld.kind is SET:
        each = rules.ace_set_value if meld.rank == 1 else min(meld.rank, 10)
        return each * len(meld.cards)
    values = _position_values(rules)
    return sum(values[meld.rank : meld.rank + len(meld.cards)])


def hand_penalty(cards: Sequence[Card], rules: Rules) -> int:
    """Penalty points of cards left in hand at the end of a deal (kalooki §3.12, rummy40 §3.11)."""
    penalty = rules.penalty
    return sum(penalty[card.rank] for card in cards)


def lay_off(meld: Meld, cards: Sequence[Card], rules: Rules, at: End | None = None) -> Meld:
    """The meld after adding `cards` from hand; jokers on a run go to the end `at` names.

    Only the shape is checked here; who may lay off where (opening, ownership) is the game's job.
    """
    cards = tuple(cards)
    if not cards:
        raise _fail(rules, "nothing_to_lay_off", "name at least one card to lay off", "layoff")
    if not rules.jokers and JOKER in cards:
        raise _fail(rules, "no_jokers", "this game is played without jokers", "joker")
    if meld.kind is SET:
        for card in cards:
            if card.suit is not None and card.rank != meld.rank:
                raise _fail(
                    rules, "layoff_does_not_fit", f"{card.text} does not match the set {meld}", "layoff_set"
                )
        merged = meld.cards + cards
        naturals = [card for card in merged if card.suit is not None]
        return _as_set(merged, naturals, rules)
    return _lay_off_run(meld, cards, rules, at)


def _lay_off_run(meld: Meld, cards: tuple[Card, ...], rules: Rules, at: End | None) -> Meld:
    suit = meld.suit
    assert suit is not None
    for card in cards:
        if card.suit is not None and card.suit is not suit:
            raise _fail(rules, "layoff_does_not_fit", f"{card.text} is not of the run's suit", "layoff_run")
    line = CARD_AT[SUITS.index(suit)]
    lowest = 1 if rules.ace_low_in_runs else 2
    count = len(cards)
    low, high = meld.rank, meld.high
    counts: dict[Card, int] = {}  # a plain dict: a Counter costs more to build than the search
    for card in cards:
        counts[card] = counts.get(card, 0) + 1
    options: list[tuple[int, Meld]] = []
    for below in range(count + 1):
        new_low, new_high = low - below, high + count - below
        if new_low < lowest or new_high > 14 or new_high - new_low >= 13:
            continue
        pool = counts.copy()
        placed: list[Card] = []
        fits = True
        for position in (*range(new_low, low), *range(high + 1, new_high + 1)):
            natural = line[position]
            if pool.get(natural):
                pool[natural] -= 1
                placed.append(natural)
            elif pool.get(JOKER):
                pool[JOKER] -= 1
                placed.append(JOKER)
            else:
                fits = False
                break
        if fits:
            new_cards = (*placed[:below], *meld.cards, *placed[below:])
            options.append((below, Meld(RUN, tuple(new_cards), new_low, suit)))
    if not options:
        raise _fail(
            rules,
            "layoff_does_not_fit",
            f"{_text(cards)} cannot extend {meld}: runs grow at either end, up to the ace, no wrap-around",
            "layoff_run",
        )
    if len(options) > 1:
        if at is None:
            raise _fail(
                rules,
                "layoff_end_required",
                f"{_text(cards)} fits either end of {meld}; say at which end (low or high)",
                "layoff_run",
            )
        options.sort(key=lambda option: option[0], reverse=at is LOW)
    elif at is not None and JOKER in cards:
        below = options[0][0]
        if (at is LOW) != (below > 0):
            message = f"the joker cannot go at the {at.value} end"
            raise _fail(rules, "layoff_does_not_fit", message, "layoff_run")
    return options[0][1]


def swap_joker(meld: Meld, cards: Sequence[Card], rules: Rules) -> Meld:
    """The meld after giving `cards` for one of its jokers (which the player then receives)."""
    cards = tuple(cards)
    mode = rules.joker_swap
    if mode is JokerSwap.NONE:
        raise _fail(rules, "joker_swap_not_allowed", "jokers cannot be taken from the table", "swap")
    if JOKER not in meld.cards:
        raise _fail(rules, "no_joker_in_meld", f"{meld} holds no joker", "swap")
    if any(card.suit is None for card in cards):
        raise _fail(rules, "swap_needs_natural", "a joker is taken back with natural cards only", "swap")
    if meld.kind is RUN:
        if len(cards) != 1:
            raise _fail(rules, "swap_wrong_cards", "a run joker is exchanged for exactly one card", "swap")
        for index, card in enumerate(meld.cards):
            if card is JOKER and meld.represented(index) is cards[0]:
                new_cards = (*meld.cards[:index], cards[0], *meld.cards[index + 1 :])
                return Meld(RUN, new_cards, meld.rank, meld.suit)
        raise _fail(
            rules,
            "swap_wrong_cards",
            f"{cards[0].text} is not a card a joker of {meld} stands for; the exact card is needed",
            "swap",
        )
    if mode is JokerSwap.RUNS_ONLY:
        raise _fail(rules, "joker_swap_not_allowed", "jokers can be taken only from runs", "swap")
    naturals = [card for card in meld.cards if card.suit is not None]
    present = {card.suit for card in naturals}
    if any(card.rank != meld.rank for card in cards):
        raise _fail(rules, "swap_wrong_cards", f"the cards must be of the set's rank ({meld})", "swap")
    if mode is JokerSwap.REPRESENTED:
        # rummy40 §3.8.2: one card of the set's rank in a missing suit replaces one joker.
        if len(cards) != 1:
            raise _fail(rules, "swap_wrong_cards", "a joker is exchanged for exactly one card", "swap")
        if rules.joker_set_distinct_suits and cards[0].suit in present:
            message = f"{cards[0].text}: that suit is already in the set"
            raise _fail(rules, "swap_wrong_cards", message, "swap")
        index = meld.cards.index(JOKER)
        return Meld(SET, (*meld.cards[:index], cards[0], *meld.cards[index + 1 :]), meld.rank)
    # Kalooki §3.8.2-§3.8.4: only 3-card sets, two natural cards of two different missing suits.
    if len(meld.cards) != 3:
        raise _fail(rules, "set_closed", f"{meld} is a closed set; its joker can never be removed", "closed")
    given = {card.suit for card in cards}
    if len(cards) != 2 or len(given) != 2 or given & present:
        raise _fail(
            rules,
            "swap_wrong_cards",
            f"a set joker is freed only by adding two cards of rank {meld.cards[0].text if naturals else ''}"
            " in two different missing suits at once; one card is a layoff that closes the set",
            "swap_set2",
        )
    if len(naturals) == 1:  # kalooki D11: two jokers, two naturals free one; the set is closed
        return Meld(SET, (naturals[0], *cards, JOKER), meld.rank)
    return Meld(SET, (*naturals, *cards), meld.rank)


def find_melds(hand: Sequence[Card], rules: Rules) -> list[Meld]:
    """A bounded, useful set of melds that can be made from `hand` (for legal actions and hints).

    Natural sets (every 3- and 4-suit choice), natural runs (every stretch of each maximal
    sequence), and with a joker: two-suit sets, sequences closed over a one-card gap, and maximal
    sequences extended by one end. Not exhaustive over joker placements: the solver is.

    Hot path: the hand is read into per-suit masks of ranks, and the ranks held in two suits or
    more (three without a joker) are read off them; the melds of one suit (or rank) depend only on
    its mask and the shape (`_Shape`), so they are memoised per shape, by an int key. Without a
    joker, a suit with no three ranks in a row holds no run and is not looked up.
    """
    jokers = False
    suit_masks = [0, 0, 0, 0]
    for card in hand:
        code = card.code
        if code:
            suit_masks[_SUIT_OF[code]] |= _RANK_BIT_OF[code]
        else:
            jokers = True
    shape = (rules.set_min, rules.set_max or 4, rules.run_min, rules.ace_low_in_runs, jokers)
    sets, runs = _memos(shape)
    clubs, diamonds, hearts, spades = suit_masks
    found: list[Meld] = []
    # The ranks that can make a set, lowest first: held in two suits or more, three without a joker.
    if jokers:
        ranks = (clubs | diamonds) & (hearts | spades) | clubs & diamonds | hearts & spades
    else:
        ranks = clubs & diamonds & (hearts | spades) | hearts & spades & (clubs | diamonds)
    while ranks:
        bit = ranks & -ranks
        ranks ^= bit
        rank = bit.bit_length() - 1
        mask = (
            (clubs >> rank & 1)
            | (diamonds >> rank & 1) << 1
            | (hearts >> rank & 1) << 2
            | (spades >> rank & 1) << 3
        )
        melds = sets.get(rank << 4 | mask)
        found.extend(_set_melds(rank, mask, shape) if melds is None else melds)
    three_in_a_row = not jokers and rules.run_min >= 3
    for suit_index in range(4):
        mask = suit_masks[suit_index]
        if not mask & (mask - 1):
            continue
        if three_in_a_row:
            line = mask | (mask & 2) << 13  # the ace also sits above the king
            if not line & line >> 1 & line >> 2:
                continue
        melds = runs.get(mask << 2 | suit_index)
        found.extend(_run_melds(suit_index, mask, shape) if melds is None else melds)
    return found


def melds_of_masks(rank: int, rank_suits: int, suit_index: int, suit_mask: int, rules: Rules) -> list[Meld]:
    """`find_melds` of jokerless cards that all share one rank or one suit, given as masks.

    `rank_suits` has bit i for suit index i among the cards of `rank`; `suit_mask` bit r for rank r
    (2 << (r - 1) as in `BITS`) among the cards of suit `suit_index`. Such cards hold no set of
    another rank (one suit each) and no run of another suit (one card each), so these are all of
    find_melds' melds, in its order; rummy500 pile picks read the masks off running counts.
    """
    shape = (rules.set_min, rules.set_max or 4, rules.run_min, rules.ace_low_in_runs, False)
    found: list[Meld] = []
    if rank_suits & (rank_suits - 1):
        found.extend(_set_melds(rank, rank_suits, shape))
    if suit_mask & (suit_mask - 1):
        found.extend(_run_melds(suit_index, suit_mask, shape))
    return found


def suit_runs(suit_index: int, suit_mask: int, jokers: bool, rules: Rules) -> tuple[Meld, ...]:
    """`find_melds`' runs of suit `suit_index` for a hand holding `suit_mask` of it (as `BITS`).

    `jokers`: whether the hand holds a joker. Contract laydowns ask for runs only, suit by suit.
    """
    if not suit_mask & (suit_mask - 1):
        return ()
    shape = (rules.set_min, rules.set_max or 4, rules.run_min, rules.ace_low_in_runs, jokers)
    return _run_melds(suit_index, suit_mask, shape)


# What find_melds' melds depend on besides the cards: set_min, set_max, run_min, ace low in runs,
# and whether the hand holds a joker.
_Shape = tuple[int, int, int, bool, bool]
_Memo = dict[int, tuple[Meld, ...]]


def _memos(shape: _Shape) -> tuple[_Memo, _Memo]:
    """The melds of one shape: sets by rank << 4 | suits held, runs by ranks held << 2 | suit index."""
    memos = _MEMOS.get(shape)
    if memos is None:
        memos = remember(_MEMOS, shape, ({}, {}), _SHAPES_LIMIT)
    return memos


def _set_melds(rank: int, mask: int, shape: _Shape) -> tuple[Meld, ...]:
    sets = _memos(shape)[0]
    key = rank << 4 | mask
    melds = sets.get(key)
    if melds is None:
        melds = remember(sets, key, _sets_of_rank(rank, mask, shape), _MEMO_LIMIT)
    return melds


def _run_melds(suit_index: int, mask: int, shape: _Shape) -> tuple[Meld, ...]:
    runs = _memos(shape)[1]
    key = mask << 2 | suit_index
    melds = runs.get(key)
    if melds is None:
        melds = remember(runs, key, _runs_of_suit(suit_index, mask, shape), _MEMO_LIMIT)
    return melds


# Per card code: suit index, its bit in the suit's position mask, rank, its bit in the rank's suit mask.
BITS: Final = ((0, 0, 0, 0), *((i // 13, 2 << i % 13, i % 13 + 1, 1 << i // 13) for i in range(52)))
_SUIT_OF: Final = tuple(bits[0] for bits in BITS)
_RANK_BIT_OF: Final = tuple(bits[1] for bits in BITS)
_MEMO_LIMIT: Final = 200_000
_SHAPES_LIMIT: Final = 64  # a handful per variant and its options
_MEMOS: Final[dict[_Shape, tuple[_Memo, _Memo]]] = {}


def _sets_of_rank(rank: int, mask: int, shape: _Shape) -> tuple[Meld, ...]:
    set_min, set_max, _, _, jokers = shape
    distinct = tuple(CARD_AT[i][rank] for i in range(4) if mask >> i & 1)
    if len(distinct) >= 3:
        return tuple(
            shared(Meld(SET, combo, rank))
            for size in range(3, min(len(distinct), set_max) + 1)
            for combo in combinations(distinct, size)
        )
    if jokers and set_min <= 3:
        return (shared(Meld(SET, (*distinct, JOKER), rank)),)
    return ()


def _runs_of_suit(suit_index: int, mask: int, shape: _Shape) -> tuple[Meld, ...]:
    _, _, run_min, ace_low, jokers = shape
    lowest = 1 if ace_low else 2
    if mask & 2:
        mask |= 1 << 14  # the ace also sits above the king
    if not ace_low:
        mask &= ~2
    line = CARD_AT[suit_index]
    suit = SUITS[suit_index]
    # The maximal stretches of positions held, low to high: the first and last bits of each.
    starts, ends = mask & ~(mask << 1), mask & ~(mask >> 1)
    segments: list[tuple[int, int]] = []
    while starts:
        first, last = starts & -starts, ends & -ends
        starts ^= first
        ends ^= last
        segments.append((first.bit_length() - 1, last.bit_length() - 1))
    found: list[Meld] = []
    for start, end in segments:
        for low in range(start, end - run_min + 2):
            for high in range(low + run_min - 1, min(end, low + 12) + 1):
                found.append(shared(Meld(RUN, line[low : high + 1], low, suit)))
    if jokers:
        for start, end in segments:
            length = end - start + 1
            if length + 1 >= run_min and length < 13:
                if end < 14:
                    found.append(shared(Meld(RUN, (*line[start : end + 1], JOKER), start, suit)))
                elif start > lowest:
                    found.append(shared(Meld(RUN, (JOKER, *line[start : end + 1]), start - 1, suit)))
        for (s1, e1), (s2, e2) in pairwise(segments):
            if s2 == e1 + 2 and e2 - s1 + 1 >= run_min and e2 - s1 < 13:
                found.append(shared(Meld(RUN, (*line[s1 : e1 + 1], JOKER, *line[s2 : e2 + 1]), s1, suit)))
    return tuple(found)


def shared(meld: Meld) -> Meld:
    """The one object of this meld's value: the first one met, kept in a bounded memo.

    Melds are values, but the memos keyed by a meld's identity (its lay command, its options on the
    table) serve only the object they were built for. Found in any hand, laid by any command or grown
    by any layoff, a meld is then one object, so those memos hold one entry per meld, not one per way
    of reaching it, and serve every later game. Built melds are checked and immutable, so the first
    object of a value is as good as any other.
    """
    key = (meld.cards, meld.rank, meld.kind is RUN)  # a set and a run may share cards and rank
    found = _SHARED.get(key)
    if found is None:
        found = remember(_SHARED, key, meld, _MEMO_LIMIT)
    return found


_SHARED: Final[dict[tuple[tuple[Card, ...], int, bool], Meld]] = {}


def layoff_targets(meld: Meld, rules: Rules) -> tuple[tuple[Card, End | None], ...]:
    """The single natural cards (and joker ends) that `meld` accepts, without building results."""
    if meld.kind is SET:
        size = len(meld.cards)
        if rules.set_max and size >= rules.set_max:
            return ()
        present = 0
        for card in meld.cards:
            if card.suit is not None:
                present |= 1 << SUITS.index(card.suit)
        has_joker = JOKER in meld.cards
        distinct = rules.joker_set_distinct_suits if has_joker else rules.natural_set_distinct_suits
        targets: list[tuple[Card, End | None]] = [
            (CARD_AT[i][meld.rank], None) for i in range(4) if not (distinct and present >> i & 1)
        ]
        if rules.joker_set_distinct_suits and bin(present).count("1") + meld.jokers >= 4:
            return tuple(targets)
        targets.append((JOKER, None))
        return tuple(targets)
    assert meld.suit is not None
    line = CARD_AT[SUITS.index(meld.suit)]
    if len(meld.cards) >= 13:
        return ()
    out: list[tuple[Card, End | None]] = []
    if meld.rank > (1 if rules.ace_low_in_runs else 2):
        out.append((line[meld.rank - 1], LOW))
        out.append((JOKER, LOW))
    if meld.high < 14:
        out.append((line[meld.high + 1], HIGH))
        out.append((JOKER, HIGH))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class MeldOptions:
    """What a table meld accepts: single-card layoffs (card, end, resulting meld) and joker swaps;
    `cards` the cards of its layoffs, so a hand holding none of them skips the meld at once."""

    layoffs: tuple[tuple[Card, End | None, Meld], ...]
    swaps: tuple[tuple[Card, ...], ...]
    cards: frozenset[Card]


_OPTIONS_MEMO: Final[dict[int, tuple[Meld, Rules, MeldOptions]]] = {}


def meld_options(meld: Meld, rules: Rules) -> MeldOptions:
    """`MeldOptions` of a table meld, memoised by identity: table melds outlive many decisions.

    The memo keeps the meld alive alongside its id, so an id can never be reused for another meld
    while its entry exists.
    """
    entry = _OPTIONS_MEMO.get(id(meld))
    if entry is not None and entry[0] is meld and entry[1] is rules:
        return entry[2]
    layoffs: list[tuple[Card, End | None, Meld]] = []
    run = meld.kind is RUN
    # A natural card on a set fits unless suits must differ and the set would then stand for more
    # than four suits (`_as_set`; layoff_targets has left out held suits and full sets).
    jokers = meld.jokers
    distinct = rules.joker_set_distinct_suits if jokers else rules.natural_set_distinct_suits
    set_fits = (
        not distinct or len({card.suit for card in meld.cards if card.suit is not None}) + 1 + jokers <= 4
    )
    for card, at in layoff_targets(meld, rules):
        if card.suit is None and not rules.jokers:
            continue  # lay_off refuses a joker in a game without them (rummy500 D2)
        # Layoffs are built directly where they can be (`lay_off` costs ten times as much): a run
        # takes the card or a joker at the end named (layoff_targets checks the ends and the
        # length); a set takes a natural card as above.
        if run:
            if at is LOW:
                layoffs.append((card, at, shared(Meld(RUN, (card, *meld.cards), meld.rank - 1, meld.suit))))
            else:
                layoffs.append((card, at, shared(Meld(RUN, (*meld.cards, card), meld.rank, meld.suit))))
        elif card.suit is not None:
            if set_fits:
                layoffs.append((card, at, shared(Meld(SET, (*meld.cards, card), meld.rank))))
        else:
            try:  # a joker on a set: lay_off also checks the suits of its natural cards (D4)
                layoffs.append((card, at, shared(lay_off(meld, (card,), rules, at))))
            except RuleViolation:
                continue
    options = MeldOptions(
        tuple(layoffs), _swap_needs(meld, rules), frozenset([card for card, _, _ in layoffs])
    )
    remember(_OPTIONS_MEMO, id(meld), (meld, rules, options), _MEMO_LIMIT)
    return options


def _swap_needs(meld: Meld, rules: Rules) -> tuple[tuple[Card, ...], ...]:
    """The natural cards that can take a joker out of `meld` (each tuple is one swap)."""
    if JOKER not in meld.cards or rules.joker_swap is JokerSwap.NONE:
        return ()
    if meld.kind is RUN:
        return tuple((meld.represented(i),) for i, card in enumerate(meld.cards) if card is JOKER)
    if rules.joker_swap is JokerSwap.RUNS_ONLY:
        return ()
    present = {card.suit for card in meld.cards if card.suit is not None}
    missing = [CARD_AT[i][meld.rank] for i, suit in enumerate(SUITS) if suit not in present]
    if rules.joker_swap is JokerSwap.REPRESENTED:
        if not rules.joker_set_distinct_suits:
            return tuple((CARD_AT[i][meld.rank],) for i in range(4))
        return tuple((card,) for card in missing)
    if len(meld.cards) != 3:
        return ()  # kalooki §3.8.4: closed sets
    return tuple(combinations(missing, 2))
