"""Contract rummy rules that need no game state: the eight contracts, buying and buy disputes.

The game (`game.py`) and the conformance driver both use these, so a vector and a live game are
judged by the same code.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from itertools import combinations, product
from typing import Final, TypeVar

from rummy_rules.cards import CARD_BY_CODE, JOKER, Card
from rummy_rules.errors import RuleViolation
from rummy_rules.melds import BITS, RUN, SET, End, Meld, MeldKind, lay_off, make_meld, suit_runs
from rummy_rules.memo import remember
from rummy_rules.options import ContractOptions
from rummy_rules.rules import Rules

# Enum members bound to module names (Python 3.11 looks `MeldKind.RUN` up slowly, see melds.py).

K = TypeVar("K")

ROUNDS: Final = 8
FREE_BUYS: Final = 3  # src ¶23: three buys a round without penalty


@dataclass(frozen=True, slots=True)
class Contract:
    """What a round requires: this many runs and threes (src ¶33-¶41)."""

    runs: int
    threes: int

    @property
    def min_cards(self) -> int:
        return 4 * self.runs + 3 * self.threes

    def __str__(self) -> str:
        parts = [
            f"{n} {word}{'s' if n > 1 else ''}"
            for n, word in ((self.runs, "run"), (self.threes, "three"))
            if n
        ]
        return " and ".join(parts)


# contract §3.4, src ¶34-¶41: the contracts of rounds 1 to 8, in order.
CONTRACTS: Final[tuple[Contract, ...]] = (
    Contract(1, 1),
    Contract(0, 2),
    Contract(2, 0),
    Contract(1, 2),
    Contract(2, 1),
    Contract(0, 3),
    Contract(3, 0),
    Contract(2, 2),
)


def contract_for(round_number: int) -> Contract:
    if type(round_number) is not int or not 1 <= round_number <= ROUNDS:
        raise RuleViolation("bad_round", f"rounds are 1 to {ROUNDS}, not {round_number!r}", "contract §3.4")
    return CONTRACTS[round_number - 1]


def _options(rules: Rules) -> ContractOptions:
    options = rules.options
    if not isinstance(options, ContractOptions):
        raise RuleViolation(
            "not_applicable", "contracts and buying exist only in contract rummy", "contract §3.4"
        )
    return options


def _readings(cards: Sequence[Card], rules: Rules, kind: MeldKind | None) -> list[Meld]:
    """Every valid reading of one group (a group of one natural card and jokers may read both ways)."""
    try:
        return [make_meld(cards, rules, kind)]
    except RuleViolation as exc:
        if exc.code != "ambiguous_meld":
            raise
    return [make_meld(cards, rules, SET), make_meld(cards, rules, RUN)]


def _fits(melds: Sequence[Meld], contract: Contract, rules: Rules) -> RuleViolation | None:
    """Why these melds do not make the contract, or None if they do."""
    runs = [meld for meld in melds if meld.kind is RUN]
    threes = [meld for meld in melds if meld.kind is SET]
    if len(runs) != contract.runs or len(threes) != contract.threes:
        return RuleViolation(
            "not_the_contract",
            f"this round's contract is exactly {contract};"
            f" you laid {len(runs)} run(s) and {len(threes)} three(s)",
            "contract §3.8.1 D7",
        )
    if len({meld.suit for meld in runs}) != len(runs):
        return RuleViolation(
            "runs_same_suit", "the runs of one contract must be of different suits", "contract §3.5.4 src ¶16"
        )
    if not _options(rules).threes_same_rank_allowed and len({meld.rank for meld in threes}) != len(threes):
        return RuleViolation(
            "threes_same_rank", "the threes of one contract must be of different ranks", "contract §3.5.4 D6"
        )
    return None


def check_contract(
    groups: Sequence[Sequence[Card]],
    round_number: int,
    rules: Rules,
    kinds: Sequence[MeldKind | None] = (),
    hand: Sequence[Card] | None = None,
) -> tuple[Meld, ...]:
    """The melds of a laydown that makes round `round_number`'s contract, or RuleViolation.

    Exactly the contract (D7), runs of different suits (src ¶16), threes of different ranks (D6),
    at least `min_natural_cards_per_meld` natural cards per meld (D5). A group that could read as a
    three or a run (one natural card with jokers) is read the way that makes the contract. In
    round 8 the melds must use the whole `hand` (src ¶41, D11).
    """
    contract = contract_for(round_number)
    min_naturals = _options(rules).min_natural_cards_per_meld
    readings: list[list[Meld]] = []
    for index, cards in enumerate(groups):
        kind = kinds[index] if index < len(kinds) else None
        options = _readings(tuple(cards), rules, kind)
        if sum(1 for card in cards if card.suit is not None) < min_naturals:
            raise RuleViolation(
                "too_few_naturals",
                f"every meld needs at least {min_naturals} natural card(s)",
                "contract §3.5.3 D5",
            )
        readings.append(options)
    if round_number == ROUNDS:
        if hand is None:
            raise RuleViolation(
                "whole_hand_required", "round 8 is laid down with the whole hand", "contract §3.11.2 D11"
            )
        used = Counter(card for cards in groups for card in cards)
        if used != Counter(hand):
            raise RuleViolation(
                "whole_hand_required",
                "in round 8 the laydown must use every card in your hand (14 after the draw)",
                "contract §3.11.2 src ¶41 D11",
            )
    first_error: RuleViolation | None = None
    for choice in product(*readings):
        error = _fits(choice, contract, rules)
        if error is None:
            return tuple(choice)
        first_error = first_error or error
    assert first_error is not None
    raise first_error


class BuyRole(Enum):
    """Who is asking to buy, relative to the card on offer."""

    OTHER = "other"
    FOREHAND = "forehand"
    DISCARDER = "discarder"


def buy_limit(rules: Rules) -> int:
    """How many buys a player may make in one round (D13: four, the fourth penalised)."""
    options = _options(rules)
    if options.fourth_buy == "penalty":
        return options.max_buys_per_round
    return min(options.max_buys_per_round, FREE_BUYS)


def buy_penalty(round_number: int, buys_before: int, role: BuyRole, rules: Rules) -> int:
    """The penalty a buy costs (0 or `buy_penalty_points`), or RuleViolation if it is not allowed.

    The forehand takes the card as their draw instead and the discarder threw it (§3.7.3); no buys
    in round 8 (src ¶30); three free buys, a fourth costs 200 (src ¶24, ¶49) and a fifth is
    refused (D13; option `fourth_buy` = reject or `max_buys_per_round` = 3 refuse the fourth).
    """
    options = _options(rules)
    contract_for(round_number)
    if role is BuyRole.FOREHAND:
        raise RuleViolation(
            "forehand_cannot_buy",
            "the forehand takes the card as their draw instead of buying it",
            "contract §3.7.3",
        )
    if role is BuyRole.DISCARDER:
        raise RuleViolation(
            "discarder_cannot_buy", "you cannot buy the card you discarded", "contract §3.7.3"
        )
    if round_number == ROUNDS:
        raise RuleViolation(
            "no_buying_in_round_8", "there is no buying in round 8", "contract §3.7.5 src ¶30"
        )
    allowed = buy_limit(rules)
    if buys_before >= allowed:
        raise RuleViolation(
            "too_many_buys",
            f"you have bought {buys_before} times this round; at most {allowed} buys are allowed",
            "contract §3.7.4 D13",
        )
    return options.buy_penalty_points if buys_before >= FREE_BUYS else 0


# §3.7.6 D14: the draw-off order, joker highest (src ¶28), then ace high down to 2.
_DRAW_OFF_RANK: Final = {0: 14, 1: 13, **{rank: rank - 1 for rank in range(2, 14)}}


def dispute_winner(draws: Mapping[K, Card]) -> K | None:
    """Who wins a buy dispute with these draw-off cards, or None if the best card is shared (D14)."""
    if len(draws) < 2:
        raise RuleViolation("no_dispute", "a dispute needs at least two players", "contract §3.7.6")
    best = max(_DRAW_OFF_RANK[card.rank] for card in draws.values())
    leaders = [player for player, card in draws.items() if _DRAW_OFF_RANK[card.rank] == best]
    return leaders[0] if len(leaders) == 1 else None


def settle_dispute(
    stock: Sequence[Card], contenders: Sequence[K]
) -> tuple[K, tuple[tuple[Card, ...], ...], tuple[Card, ...]]:
    """Play out a buy dispute on `stock` (top card last): winner, each draw-off round, stock after.

    Each contender still tied is dealt the top stock card in the given seat order (from the
    forehand's left); tied best cards draw again; all drawn cards then go back into the middle of
    the stock, position floor(n/2) from the top (§3.7.6, src ¶27-¶29, D14).
    """
    pile = list(stock)
    drawn: list[Card] = []
    rounds: list[tuple[Card, ...]] = []
    tied = list(contenders)
    while True:
        if len(pile) < len(tied):
            raise RuleViolation(
                "stock_too_small",
                "the stock cannot settle this dispute; reshuffle first",
                "contract §3.12 D16",
            )
        cards = tuple(pile.pop() for _ in tied)
        drawn.extend(cards)
        rounds.append(cards)
        draws = dict(zip(tied, cards, strict=True))
        winner = dispute_winner(draws) if len(tied) > 1 else tied[0]
        if winner is not None:
            break
        best = max(_DRAW_OFF_RANK[card.rank] for card in cards)
        tied = [player for player in tied if _DRAW_OFF_RANK[draws[player].rank] == best]
    middle = len(pile) - len(pile) // 2  # floor(n/2) cards stay above the returned ones
    return winner, tuple(rounds), (*pile[:middle], *drawn, *pile[middle:])


def round_penalty(hand_points: int, buys: int, rules: Rules) -> int:
    """A player's points for a round: cards left in hand plus 200 after a fourth buy (§3.13, D17)."""
    return hand_points + (_options(rules).buy_penalty_points if buys > FREE_BUYS else 0)


# A candidate meld of a laydown: the meld, its cards as (card code, copies) pairs (threes may hold
# two copies of a card, D4) and its card codes in order (for the search's duplicate check).
_Candidate = tuple[Meld, tuple[tuple[int, int], ...], tuple[int, ...]]


def _candidate(meld: Meld) -> _Candidate:
    counts: dict[int, int] = {}
    for card in meld.cards:
        counts[card.code] = counts.get(card.code, 0) + 1
    return meld, tuple(counts.items()), tuple(card.code for card in meld.cards)


def _threes(hand: Sequence[Card]) -> list[tuple[_Candidate, ...]]:
    """Candidate threes, one group per rank in the hand's order (D4; see `_rank_threes`)."""
    by_rank: dict[int, list[int]] = {}
    jokers = False
    for card in hand:
        if card.suit is None:
            jokers = True
        else:
            by_rank.setdefault(card.rank, []).append(card.code)
    groups: list[tuple[_Candidate, ...]] = []
    for codes in by_rank.values():
        if len(codes) >= 3 or (len(codes) == 2 and jokers):
            codes.sort()
            key = (tuple(codes), jokers)
            group = _THREES_MEMO.get(key)
            if group is None:
                group = remember(_THREES_MEMO, key, _rank_threes(key[0], jokers))
            groups.append(group)
    return groups


def _rank_threes(codes: tuple[int, ...], jokers: bool) -> tuple[_Candidate, ...]:
    """The threes of one rank's natural cards (sorted codes): every natural card of the rank, each
    choice of three, a pair with a joker (D4). Which copies go into a three matters when a run needs one."""
    cards = tuple(CARD_BY_CODE[code] for code in codes)
    rank = cards[0].rank
    found: list[Meld] = []
    if len(cards) > 3:
        found.append(Meld(SET, cards, rank))
    if len(cards) >= 3:
        found.extend(Meld(SET, combo, rank) for combo in dict.fromkeys(combinations(cards, 3)))
    elif len(cards) == 2 and jokers:
        found.append(Meld(SET, (*cards, JOKER), rank))
    return tuple(_candidate(meld) for meld in found)


def _runs(hand: Sequence[Card], rules: Rules, needed: int) -> list[tuple[_Candidate, ...]]:
    """Candidate runs, one group per suit that has any (see `_suit_runs`); none at all if fewer
    than `needed` suits have any, which `_may_run` tells from the suit's cards alone (most calls)."""
    jokers = False
    masks = [0, 0, 0, 0]
    for card in hand:
        code = card.code
        if code:
            suit_index, position_bit, _, _ = BITS[code]
            masks[suit_index] |= position_bit
        else:
            jokers = True
    run_min, ace_low = rules.run_min, rules.ace_low_in_runs
    known = _MAY_RUN.setdefault((run_min, ace_low, jokers), {})  # `_may_run` by mask, as met
    suits: list[int] = []
    for suit_index, mask in enumerate(masks):
        if mask & (mask - 1):
            may = known.get(mask)
            if may is None:
                may = known[mask] = _may_run(mask, run_min, ace_low, jokers)
            if may:
                suits.append(suit_index)
    if len(suits) < needed:
        return []
    shape = (run_min, ace_low, rules.set_min, rules.set_max, jokers)
    groups: list[tuple[_Candidate, ...]] = []
    for suit_index in suits:
        mask = masks[suit_index]
        key = (suit_index, mask, shape)
        group = _RUNS_MEMO.get(key)
        if group is None:
            melds = suit_runs(suit_index, mask, jokers, rules)
            group = remember(_RUNS_MEMO, key, _suit_runs(melds, run_min))
        if group:
            groups.append(group)
    return groups


def _may_run(mask: int, run_min: int, ace_low: bool, jokers: bool) -> bool:
    """Whether `find_melds` makes any run of one suit from its ranks `mask` (bit r for rank r).

    It does exactly when some window of `run_min` positions (the ace also above the king, and not
    below the 2 unless ace_low) holds every card, or all but one with a joker in hand (`_runs_of_suit`
    extends a stretch by a joker or closes a one-card gap with it). Bit arithmetic, no melds built.
    """
    if mask & 2:
        mask |= 1 << 14
    if not ace_low:
        mask &= ~2
    every = mask  # windows (by lowest position) of the width so far holding every card
    one_short = -1  # ... holding all but at most one
    for width in range(1, run_min):
        shifted = mask >> width
        one_short = (one_short & shifted) | every
        every &= shifted
    return bool(every or (jokers and one_short))


def _suit_runs(melds: tuple[Meld, ...], run_min: int) -> tuple[_Candidate, ...]:
    """Every run `find_melds` offers in one suit, and its joker runs shortened at either end.

    A shorter run leaves its end cards free for a three. The candidates of a suit depend only on
    the suit's cards and whether a joker is held, so `_runs` memoises them.
    """
    found: dict[tuple[Card, ...], Meld] = {}
    for meld in melds:
        found[meld.cards] = meld
        if JOKER in meld.cards:
            size = len(meld.cards)
            for low in range(size - run_min + 1):
                for high in range(low + run_min, size + 1):
                    cards = meld.cards[low:high]
                    if cards not in found and any(card.suit is not None for card in cards):
                        found[cards] = Meld(RUN, cards, meld.rank + low, meld.suit)
    return tuple(_candidate(meld) for meld in found.values())


_MAY_RUN: dict[tuple[int, bool, bool], dict[int, bool]] = {}  # at most 2**14 masks per shape
_RunsKey = tuple[int, int, tuple[int, bool, int, int, bool]]
_RUNS_MEMO: Final[dict[_RunsKey, tuple[_Candidate, ...]]] = {}
_THREES_MEMO: Final[dict[tuple[tuple[int, ...], bool], tuple[_Candidate, ...]]] = {}


def _absorb(melds: list[Meld], left: Counter[Card], rules: Rules) -> bool:
    """Lay the `left` cards off onto `melds` one by one, in place; True if all of them went."""
    progress = True
    while +left and progress:
        progress = False
        for card in list((+left).elements()):
            placed = False
            for index, meld in enumerate(melds):
                for at in (End.HIGH, End.LOW) if card.suit is None and meld.kind is RUN else (None,):
                    try:
                        melds[index] = lay_off(meld, (card,), rules, at)
                    except RuleViolation:
                        continue
                    placed = True
                    break
                if placed:
                    break
            if placed:
                left[card] -= 1
                progress = True
    return not +left


def laydowns(
    hand: Sequence[Card], round_number: int, rules: Rules, limit: int = 12
) -> list[tuple[Meld, ...]]:
    """A bounded set of laydowns of round `round_number`'s contract that `hand` can make.

    Disjoint choices of candidate runs (different suits) and threes (different ranks); in round 8
    only those that, with the leftover cards laid onto them, use the whole hand (D11). For legal
    actions and bots; `check_contract` is the rule.
    """
    contract = contract_for(round_number)
    options = _options(rules)
    if len(hand) < contract.min_cards:
        return []
    run_groups = _runs(hand, rules, contract.runs) if contract.runs else []
    if len(run_groups) < contract.runs:
        return []  # src ¶16: the runs need as many suits
    same_rank = options.threes_same_rank_allowed
    three_groups = _threes(hand) if contract.threes else []
    if len(three_groups) < contract.threes and not same_rank:
        return []  # D6: the threes need as many ranks
    # The candidates in one list, each with where the search goes on after choosing it: the next
    # suit's runs (runs of different suits, src ¶16), the next rank's threes (D6) unless threes of
    # one rank are allowed; and how many suits (ranks) are still to come from it, to stop early.
    runs, run_next, run_groups_left = _flatten(run_groups, True)
    threes, three_next, three_groups_left = _flatten(three_groups, not same_rank)
    if same_rank:
        three_groups_left = [len(threes) - index for index in range(len(threes))]
    found: list[tuple[Meld, ...]] = []
    seen: set[tuple[tuple[int, ...], ...]] = set()
    whole = round_number == ROUNDS
    # Cards left, counted per card code and taken and given back as the search goes (no copies).
    pool = [0] * len(CARD_BY_CODE)
    for card in hand:
        pool[card.code] += 1
    chosen: list[_Candidate] = []

    def extend(runs_left: int, threes_left: int, start: int) -> None:
        if len(found) >= limit:
            return
        if runs_left:
            candidates, after, groups_left, need_more = runs, run_next, run_groups_left, runs_left
        elif threes_left:
            candidates, after, groups_left, need_more = threes, three_next, three_groups_left, threes_left
        else:
            melds = [meld for meld, _, _ in chosen]
            if whole:
                if not _absorb(melds, _left(hand, pool), rules):
                    return
                key = tuple(sorted(tuple(card.code for card in meld.cards) for meld in melds))
            else:
                key = tuple(sorted(codes for _, _, codes in chosen))
            if key not in seen:
                seen.add(key)
                found.append(tuple(melds))
            return
        for index in range(start, len(candidates)):
            if groups_left[index] < need_more:
                return  # too few suits (ranks) left for the melds still needed
            candidate = candidates[index]
            need = candidate[1]
            for code, count in need:
                if pool[code] < count:
                    break
            else:  # the candidate's cards are all still in the pool
                for code, count in need:
                    pool[code] -= count
                chosen.append(candidate)
                if runs_left:
                    extend(runs_left - 1, threes_left, run_next[index] if runs_left > 1 else 0)
                else:
                    extend(0, threes_left - 1, after[index])
                chosen.pop()
                for code, count in need:
                    pool[code] += count

    extend(contract.runs, contract.threes, 0)
    return found


def _flatten(
    groups: Sequence[tuple[_Candidate, ...]], skip_group: bool
) -> tuple[list[_Candidate], list[int], list[int]]:
    """The candidates of `groups` in order; per candidate, where the search resumes after choosing
    it (the next group's start if `skip_group`, else the next candidate), and how many groups
    start at or after it (its own included)."""
    flat: list[_Candidate] = []
    after: list[int] = []
    left: list[int] = []
    for number, group in enumerate(groups):
        end = len(flat) + len(group)
        for candidate in group:
            flat.append(candidate)
            after.append(end if skip_group else len(flat))
            left.append(len(groups) - number)
    return flat, after, left


def _left(hand: Sequence[Card], pool: Sequence[int]) -> Counter[Card]:
    """The cards `pool` still counts, in the hand's order (the order `_absorb` tries them in)."""
    return Counter({card: pool[card.code] for card in dict.fromkeys(hand) if pool[card.code]})
