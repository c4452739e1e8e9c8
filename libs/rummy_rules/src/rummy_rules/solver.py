"""The best partition of a hand into melds: the least penalty left in hand, exact, with jokers.

Bots and hints need it on every decision, so it is built for speed rather than by trying meld
combinations. Every partition splits into sets (grouped by rank) and runs (grouped by suit), so:

1. choose which naturals (and how many jokers) go into sets, rank by rank; only ranks whose
   naturals plus jokers can make a set have a choice, which prunes almost every rank;
2. for what is left, the best runs of each suit depend only on that suit's cards and on how many
   jokers it gets: a memoised function of (suit key, jokers), shared across hands, combined over
   the four suits by a small knapsack on the jokers.

A suit key packs the copies of each position, 2 bits per position: position 1 is the low ace,
2..13 the pips and faces, 14 the high ace (an ace moves there only inside the run search).
Hands with no jokers and no repeated card (every gin-rummy hand, most one-pack hands) take a
faster path: per-suit tables indexed by 13-bit masks, and sets only where a rank has 3+ cards.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final

from rummy_rules.cards import CARD_BY_CODE, JOKER, SUITS, Card
from rummy_rules.melds import MeldKind

_BITS: Final = 2  # copies per position fit in 2 bits: at most 3 packs (contract D1)
_MAX_COPIES: Final = 3
_HIGH_ACE: Final = 14
_LONGEST_RUN: Final = 13  # kalooki D5, rummy40 D5, contract D3: ace at one end only, no wrap
_CACHE_LIMIT: Final = 1 << 18  # entries per memo before it starts afresh: bounded memory in services


_BIT_OF: Final = {card: 1 << card.code for card in CARD_BY_CODE}
# A hand's memo key: copies per card code in fields of _COUNT_BITS, so fewer cards never carry.
_COUNT_BITS: Final = 8
_COUNT_OF: Final = {card: 1 << (_COUNT_BITS * card.code) for card in CARD_BY_CODE}
# Per natural card code: its suit index and the shift of its position in the suit key.
_SUIT_OF: Final = (-1, *((code - 1) // 13 for code in range(1, 53)))
_SHIFT_OF: Final = (-1, *(_BITS * ((code - 1) % 13) for code in range(1, 53)))


def _unit(position: int) -> int:
    return 1 << (_BITS * (position - 1))


def _rank_at(position: int) -> int:
    return 1 if position == _HIGH_ACE else position


@dataclass(frozen=True, slots=True)
class MeldParams:
    """What a meld is in one variant, and what each card costs when left in hand.

    `penalties[rank]` is the penalty of a natural card of that rank (index 0 unused);
    `joker_penalty` is None when the variant has no jokers.
    """

    name: str
    penalties: tuple[int, ...]
    joker_penalty: int | None
    set_min: int = 3
    set_max: int | None = 4
    set_distinct_suits: bool = True
    run_min: int = 3
    ace_low: bool = True
    ace_high: bool = True

    def __post_init__(self) -> None:
        if len(self.penalties) != 14:
            raise ValueError("penalties must give ranks 1..13 (index 0 unused)")
        if self.set_min < 2 or (self.set_max is not None and self.set_max < self.set_min):
            raise ValueError(f"bad set sizes {self.set_min}..{self.set_max}")
        if not 2 <= self.run_min <= _LONGEST_RUN or not (self.ace_low or self.ace_high):
            raise ValueError("runs need a minimum length in 2..13 and the ace at one end at least")

    def penalty_of(self, card: Card) -> int:
        """What `card` costs when left in hand."""
        if card.is_joker:
            if self.joker_penalty is None:
                raise ValueError(f"{self.name} has no jokers")
            return self.joker_penalty
        return self.penalties[card.rank]


def _pips(ace: int, face: int = 10) -> tuple[int, ...]:
    return (0, ace, 2, 3, 4, 5, 6, 7, 8, 9, 10, face, face, face)


# kalooki §3.2/D15: A 11, JK 25; sets 3-4 distinct suits (D4); runs 3+, ace low or high (D5).
KALOOKI: Final = MeldParams("kalooki", _pips(11), 25)
# rummy40 §3.2/D13: A 11, JK 20; sets 3-4 distinct suits (D4); runs 3+, ace low or high (D5).
RUMMY40: Final = MeldParams("rummy40", _pips(11), 20)
# rummy500 §3.2/D3: ace 15 in hand, no jokers (D2); sets 3-4 (one pack: suits differ); runs 3+.
RUMMY500: Final = MeldParams("rummy500", _pips(15), None)
# contract §3: JK 20, A 15, 9-K 10, 2-8 5; threes 3+ with repeated suits; runs 4+ (D3).
CONTRACT: Final = MeldParams(
    "contract",
    (0, 15, 5, 5, 5, 5, 5, 5, 5, 10, 10, 10, 10, 10),
    20,
    set_max=None,
    set_distinct_suits=False,
    run_min=4,
)
# Gin rummy deadwood (OpenSpiel gin_rummy, RLCard gin_rummy): A 1, faces 10, ace low only, no jokers.
GIN: Final = MeldParams("gin", _pips(1), None, ace_high=False)


@dataclass(frozen=True, slots=True)
class SolvedMeld:
    """One meld of a partition: `cards` as held (jokers included), `represents` what each stands for.

    Runs are written low to high; a joker's entry in `represents` is the card it stands for
    (for a set, a missing suit of the set's rank).
    """

    kind: MeldKind
    cards: tuple[Card, ...]
    represents: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class Partition:
    """A best partition: the melds, the cards left over, and their penalty."""

    melds: tuple[SolvedMeld, ...]
    deadwood: tuple[Card, ...]
    penalty: int


# One set choice for a rank: copies taken per suit, jokers used, penalty saved.
_Counts = tuple[int, int, int, int]
_Keep = tuple[int, int, int, int]  # per suit, the 13-bit mask of ranks a set choice leaves
_KEEP_ALL: Final = (8191, 8191, 8191, 8191)
_SetOption = tuple[_Counts, int, int]


class _RunsMemo(dict[int, int]):
    """Best run value per one-suit state, computed on first use (the dict `__missing__` hook)."""

    __slots__ = ("_compute",)

    def __init__(self, compute: Callable[[int], int]) -> None:
        super().__init__()
        self._compute = compute

    def __missing__(self, state: int) -> int:
        value = self._compute(state)
        if len(self) >= _CACHE_LIMIT:
            self.clear()
        self[state] = value
        return value


@dataclass(slots=True)
class MeldSolver:
    """Exact best-partition search for one variant's meld rules; caches are per instance."""

    params: MeldParams
    _runs_memo: _RunsMemo = field(init=False, repr=False)
    _hand_memo: dict[int, int] = field(default_factory=dict, init=False, repr=False)
    _set_memo: dict[tuple[int, tuple[int, ...], int], list[_SetOption]] = field(
        default_factory=dict, init=False, repr=False
    )
    _deadwood_table: list[int] = field(default_factory=list, init=False, repr=False)
    _fast_sets: dict[tuple[int, int], list[_Keep]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self._runs_memo = _RunsMemo(self._runs)

    # ---- public API -------------------------------------------------------------------------

    def penalty(self, hand: Iterable[Card]) -> int:
        """The least penalty that can be left in `hand` after melding all it can."""
        cards = hand if isinstance(hand, (list, tuple)) else tuple(hand)
        # Summing distinct powers of two never carries, so the bit count equals the card count
        # exactly when no card repeats; the sum then is the hand's bit mask (bit 0: jokers).
        try:
            mask = sum(map(_BIT_OF.__getitem__, cards))
        except (KeyError, TypeError) as exc:
            raise TypeError(f"a hand holds cards (parse_cards), got {cards!r}") from exc
        if mask & 1 == 0 and mask.bit_count() == len(cards):
            return self._fast_penalty(mask >> 1)
        # The hand as a multiset, summed in C like the mask: a field per card code, which cannot
        # carry below 256 cards (more than 171 cards hold 4+ copies or 16+ jokers: refused unmemoised).
        memo_key = sum(map(_COUNT_OF.__getitem__, cards)) if len(cards) < 1 << _COUNT_BITS else -1
        left = self._hand_memo.get(memo_key)
        if left is None:
            keys, jokers, total, rank_naturals = self._encode(cards)  # refuses what no entry holds
            left = total - self._search(keys, jokers, rank_naturals)[0]
            if len(self._hand_memo) >= _CACHE_LIMIT:
                self._hand_memo.clear()
            self._hand_memo[memo_key] = left
        return left

    def solve(self, hand: Iterable[Card]) -> Partition:
        """A best partition of `hand` (one of them when several tie), with its melds spelled out."""
        cards = tuple(hand)
        if not all(isinstance(card, Card) for card in cards):
            raise TypeError(f"a hand holds cards (parse_cards), got {cards!r}")
        keys, jokers, total, rank_naturals = self._encode(cards)
        saved, set_choice, run_keys, run_jokers = self._search(keys, jokers, rank_naturals)
        melds: list[SolvedMeld] = []
        for rank, taken, set_jokers in set_choice:
            melds.extend(self._spell_sets(rank, taken, set_jokers))
        allocation = self._allocate_jokers(run_keys, run_jokers)
        for suit_index, (key, suit_jokers) in enumerate(zip(run_keys, allocation, strict=True)):
            melds.extend(self._spell_runs(suit_index, key, suit_jokers))
        remaining = list(cards)
        for meld in melds:
            for card in meld.cards:
                remaining.remove(card)
        deadwood = tuple(sorted(remaining, key=lambda card: card.code))
        penalty = sum(self.params.penalty_of(card) for card in deadwood)
        assert penalty == total - saved, "solver traceback disagrees with its value"
        return Partition(tuple(melds), deadwood, penalty)

    # ---- encoding ---------------------------------------------------------------------------

    def _encode(self, cards: Sequence[Card]) -> tuple[list[int], int, int, list[int]]:
        """Suit keys, joker count, total penalty and naturals per rank of a hand."""
        params = self.params
        penalties = params.penalties
        keys = [0, 0, 0, 0]
        rank_naturals = [0] * 14
        jokers = 0
        total = 0
        for card in cards:
            code = card.code
            if code == 0:
                total += params.penalty_of(card)  # refuses a joker where there are none
                jokers += 1
                continue
            suit = _SUIT_OF[code]
            shift = _SHIFT_OF[code]
            if (keys[suit] >> shift) & _MAX_COPIES == _MAX_COPIES:
                raise ValueError(f"more than {_MAX_COPIES} copies of {card}")
            keys[suit] += 1 << shift
            rank = card.rank
            rank_naturals[rank] += 1
            total += penalties[rank]
        if jokers > 15:
            raise ValueError("more than 15 jokers")
        return keys, jokers, total, rank_naturals

    # ---- sets, then runs per suit -----------------------------------------------------------

    def _search(
        self, keys: list[int], jokers: int, rank_naturals: list[int]
    ) -> tuple[int, list[tuple[int, _Counts, int]], list[int], int]:
        """Best penalty saved; the sets chosen (rank, copies per suit, jokers); what runs get."""
        params = self.params
        # Fewest naturals of a rank that can be in a set: jokers help, but one natural with
        # jokers is left to the run search whenever it also makes a run.
        least = max(1, params.set_min - jokers)
        if params.run_min <= params.set_min:
            least = max(least, 2)
        candidates: list[tuple[int, list[_SetOption]]] = []
        for rank in range(1, 14):
            if rank_naturals[rank] >= least:
                shift = _BITS * (rank - 1)
                counts = tuple((key >> shift) & _MAX_COPIES for key in keys)
                options = self._set_options(rank, counts, jokers)
                if options:
                    candidates.append((rank, options))
        runs_total = self._runs_total
        if not candidates:
            return runs_total(keys[0], keys[1], keys[2], keys[3], jokers), [], keys, jokers
        best = -1
        best_sets: list[tuple[int, _Counts, int]] = []
        best_keys = keys
        best_jokers = jokers
        chosen: list[tuple[int, _Counts, int]] = []
        last = len(candidates)

        def walk(index: int, current: list[int], jokers_left: int, saved: int) -> None:
            nonlocal best, best_sets, best_keys, best_jokers
            if index == last:
                value = saved + runs_total(current[0], current[1], current[2], current[3], jokers_left)
                if value > best:
                    best, best_sets, best_keys, best_jokers = value, list(chosen), current, jokers_left
                return
            walk(index + 1, current, jokers_left, saved)
            rank, options = candidates[index]
            shift = _BITS * (rank - 1)
            for taken, used, value in options:
                if used > jokers_left:
                    continue
                after = [
                    current[0] - (taken[0] << shift),
                    current[1] - (taken[1] << shift),
                    current[2] - (taken[2] << shift),
                    current[3] - (taken[3] << shift),
                ]
                chosen.append((rank, taken, used))
                walk(index + 1, after, jokers_left - used, saved + value)
                chosen.pop()

        walk(0, keys, jokers, 0)
        return best, best_sets, best_keys, best_jokers

    def _set_options(self, rank: int, counts: tuple[int, ...], jokers: int) -> list[_SetOption]:
        """Every way to put naturals of `rank` (and jokers) into valid sets, with the penalty saved."""
        memo_key = (rank, counts, jokers)
        cached = self._set_memo.get(memo_key)
        if cached is not None:
            return cached
        params = self.params
        joker_penalty = params.joker_penalty or 0
        options: list[_SetOption] = []
        if sum(counts) + jokers >= params.set_min:
            for taken in itertools.product(*(range(count + 1) for count in counts)):
                naturals = sum(taken)
                for used in range(jokers + 1):
                    # One natural plus jokers is also a run when long enough; the run search finds it.
                    if naturals == 1 and params.run_min <= used + 1 <= _LONGEST_RUN:
                        break
                    if self._sets_feasible(taken, used):
                        options.append(
                            (
                                (taken[0], taken[1], taken[2], taken[3]),
                                used,
                                naturals * params.penalties[rank] + used * joker_penalty,
                            )
                        )
        self._set_memo[memo_key] = options
        return options

    def _sets_feasible(self, taken: Sequence[int], jokers: int) -> bool:
        """Can these naturals of one rank and `jokers` form some number t of valid sets?

        Dealing the naturals round-robin gives every set 1+ naturals and no repeated suit as long
        as no suit has more copies than there are sets; jokers then fill each set to its size.
        Every meld needs a natural (kalooki D6, rummy40 D6, contract D5).
        """
        params = self.params
        naturals = sum(taken)
        if naturals == 0:
            return False
        size = naturals + jokers
        low = max(taken) if params.set_distinct_suits else 1
        if params.set_max is not None:
            low = max(low, -(-size // params.set_max))
        high = min(naturals, size // params.set_min)
        return low <= high

    def _runs_total(self, k0: int, k1: int, k2: int, k3: int, jokers: int) -> int:
        """Best penalty saved by runs over the four suits, which share `jokers`."""
        memo = self._runs_memo
        a0, a1, a2, a3 = memo[k0 << 4], memo[k1 << 4], memo[k2 << 4], memo[k3 << 4]
        base = a0 + a1 + a2 + a3
        if jokers == 0:
            return base
        # Gains from giving a suit one joker; monotone in jokers, so the best split is a knapsack.
        g0, g1, g2, g3 = (
            memo[k0 << 4 | 1] - a0,
            memo[k1 << 4 | 1] - a1,
            memo[k2 << 4 | 1] - a2,
            memo[k3 << 4 | 1] - a3,
        )
        if jokers == 1:
            return base + max(g0, g1, g2, g3)
        if jokers == 2:
            pair = max(g0 + g1, g0 + g2, g0 + g3, g1 + g2, g1 + g3, g2 + g3)
            two = max(
                memo[k0 << 4 | 2] - a0, memo[k1 << 4 | 2] - a1, memo[k2 << 4 | 2] - a2, memo[k3 << 4 | 2] - a3
            )
            return base + max(pair, two)
        return self._knapsack([k0, k1, k2, k3], jokers)[0]

    def _knapsack(self, keys: list[int], jokers: int) -> tuple[int, list[int]]:
        """Best split of `jokers` over the suits' runs: the value and the jokers per suit."""
        memo = self._runs_memo
        table = [0] * (jokers + 1)
        picks: list[list[int]] = []
        for key in keys:
            values = [memo[key << 4 | used] for used in range(jokers + 1)]
            new = [0] * (jokers + 1)
            pick = [0] * (jokers + 1)
            for total in range(jokers + 1):
                for used in range(total + 1):
                    value = table[total - used] + values[used]
                    if value > new[total]:
                        new[total], pick[total] = value, used
            table = new
            picks.append(pick)
        allocation = [0, 0, 0, 0]
        left = jokers
        for suit in range(3, -1, -1):
            allocation[suit] = picks[suit][left]
            left -= allocation[suit]
        return table[jokers], allocation

    def _allocate_jokers(self, keys: list[int], jokers: int) -> list[int]:
        return self._knapsack(keys, jokers)[1]

    # ---- runs within one suit ---------------------------------------------------------------

    def _runs(self, state: int) -> int:
        """Best penalty saved by runs in one suit; `state` = suit key << 4 | jokers available."""
        runs = self._runs_memo
        best = 0
        for gain, next_state, _ in self._run_moves(state):
            value = gain + runs[next_state] if next_state >> 4 else gain
            best = max(best, value)
        return best

    def _run_moves(self, state: int) -> Iterator[tuple[int, int, tuple[int, ...]]]:
        """The choices for the lowest card of a suit: leave it, lift an ace high, or start a run.

        Yields (penalty saved, next state, run positions with 0 marking a joker). The lowest natural
        of a run has only jokers below it, so these choices cover every partition.
        """
        key, jokers = state >> 4, state & 15
        if key == 0:
            return
        params = self.params
        penalties = params.penalties
        joker_penalty = params.joker_penalty or 0
        low_bit = (key & -key).bit_length() - 1
        position = low_bit // _BITS + 1
        unit = _unit(position)
        rest = key - unit
        yield 0, rest << 4 | jokers, ()
        if position == 1 and params.ace_high:
            yield 0, (rest + _unit(_HIGH_ACE)) << 4 | jokers, ()
        lowest = 1 if params.ace_low else 2
        highest = _HIGH_ACE if params.ace_high else 13
        for below in range(jokers + 1):
            start = position - below
            if start < lowest:
                break
            # Depth-first over the run's upper end: each next position is a natural or a joker.
            stack = [
                (
                    position,
                    rest,
                    below,
                    penalties[_rank_at(position)] + below * joker_penalty,
                    (0,) * below + (position,),
                )
            ]
            while stack:
                top, left, used, gain, layout = stack.pop()
                length = top - start + 1
                if length >= params.run_min:
                    yield gain, left << 4 | (jokers - used), layout
                if top == highest or length == _LONGEST_RUN:
                    continue
                nxt = top + 1
                if (left >> (_BITS * (nxt - 1))) & _MAX_COPIES:
                    gain_here = gain + penalties[_rank_at(nxt)]
                    stack.append((nxt, left - _unit(nxt), used, gain_here, (*layout, nxt)))
                if used < jokers:
                    stack.append((nxt, left, used + 1, gain + joker_penalty, (*layout, 0)))

    # ---- spelling out a partition -----------------------------------------------------------

    def _spell_runs(self, suit_index: int, key: int, jokers: int) -> list[SolvedMeld]:
        """Follow the memoised optimum for one suit and write its runs as melds."""
        suit = SUITS[suit_index]
        melds: list[SolvedMeld] = []
        state = key << 4 | jokers
        while state >> 4:
            target = self._runs_memo[state]
            _, next_state, layout = next(
                move
                for move in self._run_moves(state)
                if move[0] + (self._runs_memo[move[1]] if move[1] >> 4 else 0) == target
            )
            if layout:
                naturals = [position for position in layout if position]
                start = naturals[0] - layout.index(naturals[0])
                represents = tuple(Card(_rank_at(start + offset), suit) for offset in range(len(layout)))
                cards = tuple(
                    JOKER if position == 0 else represents[offset] for offset, position in enumerate(layout)
                )
                melds.append(SolvedMeld(MeldKind.RUN, cards, represents))
            state = next_state
        return melds

    def _spell_sets(self, rank: int, taken: tuple[int, ...], jokers: int) -> list[SolvedMeld]:
        """Deal the chosen naturals round-robin into the fewest valid sets, then add the jokers."""
        params = self.params
        naturals = sum(taken)
        size = naturals + jokers
        count = max(taken) if params.set_distinct_suits else 1
        if params.set_max is not None:
            count = max(count, -(-size // params.set_max))
        groups: list[list[Card]] = [[] for _ in range(count)]
        index = 0
        for suit, copies in zip(SUITS, taken, strict=True):
            for _ in range(copies):
                groups[index % count].append(Card(rank, suit))
                index += 1
        # Fill each set to the minimum first, then spread the rest.
        fills = [0] * count
        left = jokers
        for group_index, group in enumerate(groups):
            need = max(0, params.set_min - len(group))
            fills[group_index] = need
            left -= need
        group_index = 0
        while left > 0:
            if params.set_max is None or len(groups[group_index]) + fills[group_index] < params.set_max:
                fills[group_index] += 1
                left -= 1
            group_index = (group_index + 1) % count
        melds = []
        for group, fill in zip(groups, fills, strict=True):
            present = {card.suit for card in group}
            missing = [suit for suit in SUITS if suit not in present] or list(SUITS)
            stands_for = tuple(Card(rank, missing[i % len(missing)]) for i in range(fill))
            melds.append(SolvedMeld(MeldKind.SET, (*group, *(JOKER,) * fill), (*group, *stands_for)))
        return melds

    # ---- the fast path: no jokers, no repeated card ---------------------------------------

    def _fast_penalty(self, mask: int) -> int:
        """Penalty left for a 52-bit hand (bit code-1), using per-suit tables of deadwood."""
        table = self._deadwood_table or self._build_deadwood_table()
        m0 = mask & 8191
        m1 = (mask >> 13) & 8191
        m2 = (mask >> 26) & 8191
        m3 = mask >> 39
        if self.params.set_min == 3:
            triples = (m0 & m1 & (m2 | m3)) | (m2 & m3 & (m0 | m1))
        else:
            triples = self._ranks_with_at_least(self.params.set_min, (m0, m1, m2, m3))
        best = table[m0] + table[m1] + table[m2] + table[m3]
        if not triples:
            return best
        options = self._fast_set_options
        bit = triples & -triples
        if bit == triples:  # the usual case: one rank can make a set
            for k0, k1, k2, k3 in options(bit, m0, m1, m2, m3):
                best = min(best, table[m0 & k0] + table[m1 & k1] + table[m2 & k2] + table[m3 & k3])
            return best
        per_rank: list[list[_Keep]] = []
        while triples:
            bit = triples & -triples
            triples ^= bit
            per_rank.append([_KEEP_ALL, *options(bit, m0, m1, m2, m3)])
        for combo in itertools.product(*per_rank):
            k0 = k1 = k2 = k3 = 8191
            for r0, r1, r2, r3 in combo:
                k0 &= r0
                k1 &= r1
                k2 &= r2
                k3 &= r3
            best = min(best, table[m0 & k0] + table[m1 & k1] + table[m2 & k2] + table[m3 & k3])
        return best

    @staticmethod
    def _ranks_with_at_least(count: int, masks: tuple[int, int, int, int]) -> int:
        result = 0
        for bit_index in range(13):
            bit = 1 << bit_index
            if sum(1 for mask in masks if mask & bit) >= count:
                result |= bit
        return result

    def _fast_set_options(self, bit: int, m0: int, m1: int, m2: int, m3: int) -> list[_Keep]:
        """Sets of one rank (`bit`) from the suits holding it, as the masks of what each keeps."""
        present = (m0 & bit and 1) | (m1 & bit and 2) | (m2 & bit and 4) | (m3 & bit and 8)
        cached = self._fast_sets.get((bit, present))
        if cached is not None:
            return cached
        params = self.params
        options: list[_Keep] = []
        suits = [index for index in range(4) if present >> index & 1]
        high = len(suits) if params.set_max is None else min(len(suits), params.set_max)
        for size in range(params.set_min, high + 1):
            for chosen in itertools.combinations(suits, size):
                keep = tuple(8191 ^ bit if index in chosen else 8191 for index in range(4))
                options.append((keep[0], keep[1], keep[2], keep[3]))
        self._fast_sets[(bit, present)] = options
        return options

    def _build_deadwood_table(self) -> list[int]:
        """Deadwood left by the best runs for every 13-bit suit mask (one copy per rank).

        Shared by solvers whose runs and penalties agree (kalooki and rummy40): it is ~8k entries.
        """
        params = self.params
        shape = (params.penalties, params.run_min, params.ace_low, params.ace_high)
        table = _DEADWOOD_TABLES.get(shape)
        if table is None:
            table = _DEADWOOD_TABLES[shape] = _deadwood_table(*shape)
        self._deadwood_table = table
        return table


def _deadwood_table(penalties: tuple[int, ...], run_min: int, ace_low: bool, ace_high: bool) -> list[int]:
    """Deadwood per 13-bit suit mask (bit rank-1), by stretches rather than the run search.

    With one copy per rank and no jokers, a stretch of consecutive positions melds whole when it
    holds `run_min` cards or more (13 at most: the ace is held once) and not at all when shorter;
    the ace sits low (position 1) or high (14), whichever saves more.
    """
    size = 1 << 13
    total = [0] * size
    for mask in range(1, size):
        low = mask & -mask
        total[mask] = total[mask ^ low] + penalties[low.bit_length()]
    low_ace = _stretch_savings(penalties[1:], run_min)  # positions 1..13: A, 2..K
    high_ace = _stretch_savings((*penalties[2:], penalties[1]), run_min)  # positions 2..14: 2..K, A
    table = []
    for mask in range(size):
        saved = 0
        if ace_low:
            saved = low_ace[mask]
        if ace_high:
            saved = max(saved, high_ace[(mask >> 1) | (mask & 1) << 12])
        table.append(total[mask] - saved)
    return table


def _stretch_savings(values: Sequence[int], run_min: int) -> list[int]:
    """Per 13-bit mask over 13 consecutive positions: the values of its stretches of `run_min`+ bits."""
    prefix = [0, *itertools.accumulate(values)]
    saved = [0] * (1 << 13)
    for mask in range(1, 1 << 13):
        low = (mask & -mask).bit_length() - 1
        shifted = mask >> low
        length = (~shifted & (shifted + 1)).bit_length() - 1  # the trailing ones: the lowest stretch
        value = prefix[low + length] - prefix[low] if length >= run_min else 0
        saved[mask] = value + saved[mask ^ (((1 << length) - 1) << low)]
    return saved


# One table per penalties and run shape: a handful, as there are few `MeldParams` (see _SOLVERS).
_DEADWOOD_TABLES: dict[tuple[tuple[int, ...], int, bool, bool], list[int]] = {}


_SOLVERS: dict[MeldParams, MeldSolver] = {}


def solver_for(params: MeldParams) -> MeldSolver:
    """The shared solver for `params` (its caches warm up across calls)."""
    solver = _SOLVERS.get(params)
    if solver is None:
        solver = _SOLVERS[params] = MeldSolver(params)
    return solver


__all__ = [
    "CONTRACT",
    "GIN",
    "KALOOKI",
    "RUMMY40",
    "RUMMY500",
    "MeldParams",
    "MeldSolver",
    "Partition",
    "SolvedMeld",
    "solver_for",
]
