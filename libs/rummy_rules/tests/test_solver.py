"""The meld solver against a brute-force oracle and hand-made hands (jokers, aces, two packs)."""

from __future__ import annotations

import functools
import itertools
import random
from collections import Counter
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rummy_rules.bots import params_for
from rummy_rules.cards import CARD_BY_CODE, JOKER, STANDARD_PACK, SUITS, Card, parse_cards
from rummy_rules.melds import MeldKind, make_meld
from rummy_rules.solver import CONTRACT, GIN, KALOOKI, RUMMY40, RUMMY500, MeldParams, MeldSolver, SolvedMeld
from rummy_rules.variants import rules_for

ACE_HIGH_ONLY = MeldParams("ace-high-only", KALOOKI.penalties, 25, ace_low=False)
ALL_PARAMS = (KALOOKI, RUMMY40, RUMMY500, CONTRACT, GIN, ACE_HIGH_ONLY)


def is_valid_meld(cards: Sequence[Card], params: MeldParams) -> bool:
    """The meld rules written directly from the specs, independent of the solver's search."""
    naturals = [card for card in cards if not card.is_joker]
    size = len(cards)
    if not naturals:  # kalooki D6, rummy40 D6, contract D5
        return False
    return _is_set(naturals, size, params) or _is_run(naturals, size, params)


def _is_set(naturals: list[Card], size: int, params: MeldParams) -> bool:
    if len({card.rank for card in naturals}) != 1 or size < params.set_min:
        return False
    if params.set_max is not None and size > params.set_max:
        return False
    if params.set_distinct_suits:
        # Jokers stand for missing suits, so a set with distinct suits holds at most four cards.
        return len({card.suit for card in naturals}) == len(naturals) and size <= 4
    return True


def _is_run(naturals: list[Card], size: int, params: MeldParams) -> bool:
    if len({card.suit for card in naturals}) != 1 or not params.run_min <= size <= 13:
        return False
    ranks = [card.rank for card in naturals]
    if len(set(ranks)) != len(ranks):
        return False
    ace_positions = ([1] if params.ace_low else []) + ([14] if params.ace_high else [])
    choices = [ace_positions if rank == 1 else [rank] for rank in ranks]
    lowest, highest = (1 if params.ace_low else 2), (14 if params.ace_high else 13)
    for positions in itertools.product(*choices):
        for start in range(lowest, highest - size + 2):
            if all(start <= position < start + size for position in positions):
                return True
    return False


def oracle_penalty(hand: Sequence[Card], params: MeldParams) -> int:
    """Try every partition: the first card is left over or in some valid meld of the hand's cards.

    Every sub-multiset of the hand is checked with `is_valid_meld` once; the search then removes
    the first card alone or with each valid meld containing it.
    """
    codes = tuple(sorted(card.code for card in hand))
    melds: set[tuple[int, ...]] = set()
    for size in range(2, len(codes) + 1):
        for picked in itertools.combinations(codes, size):
            if picked not in melds and is_valid_meld([CARD_BY_CODE[code] for code in picked], params):
                melds.add(picked)
    by_first: dict[int, list[Counter[int]]] = {}
    for meld in melds:
        by_first.setdefault(meld[0], []).append(Counter(meld))

    @functools.cache
    def best(left: tuple[int, ...]) -> int:
        if not left:
            return 0
        first = left[0]
        result = params.penalty_of(CARD_BY_CODE[first]) + best(left[1:])
        held = Counter(left)
        for meld in by_first.get(first, ()):
            if all(held[code] >= count for code, count in meld.items()):
                result = min(result, best(tuple(sorted((held - meld).elements()))))
        return result

    return best(codes)


def penalty_of_cards(cards: Sequence[Card], params: MeldParams) -> int:
    return sum(params.penalty_of(card) for card in cards)


def check_partition(hand: Sequence[Card], params: MeldParams, solver: MeldSolver) -> int:
    """Solve `hand`, check the partition is real (valid melds, exactly the hand), return its penalty."""
    partition = solver.solve(hand)
    used = Counter(card for meld in partition.melds for card in meld.cards) + Counter(partition.deadwood)
    assert used == Counter(hand)
    for meld in partition.melds:
        assert is_valid_meld(meld.cards, params), meld
        _check_represents(meld)
    assert partition.penalty == penalty_of_cards(partition.deadwood, params)
    assert solver.penalty(hand) == partition.penalty
    return partition.penalty


def _check_represents(meld: SolvedMeld) -> None:
    for card, stands_for in zip(meld.cards, meld.represents, strict=True):
        assert card.is_joker or card is stands_for
        assert not stands_for.is_joker
    if meld.kind is MeldKind.RUN:
        ranks = [card.rank for card in meld.represents]
        positions = [14 if rank == 1 and index else rank for index, rank in enumerate(ranks)]
        assert positions == list(range(positions[0], positions[0] + len(positions)))
    else:
        assert len({card.rank for card in meld.represents}) == 1


def hands(
    params: MeldParams, max_cards: int, min_cards: int = 1, ranks: int = 4
) -> st.SearchStrategy[list[Card]]:
    """Hands from a narrow window of ranks and suits (and two packs where jokers exist), so that
    melds, overlapping choices and repeated cards are common."""
    copies = 1 if params.joker_penalty is None else 2
    jokers = 0 if params.joker_penalty is None else 2

    @st.composite
    def build(draw: st.DrawFn) -> list[Card]:
        low = draw(st.integers(1, 10))
        window = [((low + offset - 1) % 13) + 1 for offset in range(ranks)]
        suits = draw(st.lists(st.sampled_from(SUITS), min_size=2, max_size=3, unique=True))
        pool = [Card(rank, suit) for rank in window for suit in suits] * copies + [JOKER] * jokers
        size = draw(st.integers(min(min_cards, len(pool)), min(max_cards, len(pool))))
        indices = draw(st.lists(st.integers(0, len(pool) - 1), min_size=size, max_size=size, unique=True))
        return [pool[index] for index in indices]

    return build()


@pytest.mark.parametrize("params", ALL_PARAMS, ids=lambda params: params.name)
def test_solver_matches_brute_force_on_random_small_hands(params: MeldParams) -> None:
    solver = MeldSolver(params)

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(hands(params, 8))
    def check(hand: list[Card]) -> None:
        assert check_partition(hand, params, solver) == oracle_penalty(hand, params)

    check()


@pytest.mark.parametrize("params", (KALOOKI, RUMMY40, CONTRACT), ids=lambda params: params.name)
def test_solver_matches_brute_force_on_full_hands(params: MeldParams) -> None:
    # 13 cards from 5 ranks in 2-3 suits, two packs, two jokers: many overlapping melds.
    solver = MeldSolver(params)

    @settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(hands(params, 13, min_cards=13, ranks=5))
    def check(hand: list[Card]) -> None:
        assert check_partition(hand, params, solver) == oracle_penalty(hand, params)

    check()


@pytest.mark.parametrize(
    ("params", "hand", "penalty"),
    [
        # Jokers fill a gap and an end; both jokers used, nothing left (kalooki D6).
        (KALOOKI, "JK 5H 7H QS KS JK", 0),
        # Ace high or low, never both, no wrap-around (kalooki D5): Q-K-A keeps 2H 3H out.
        (KALOOKI, "QH KH AH 2H 3H", 5),
        (KALOOKI, "KH AH 2H", 23),
        # A set takes distinct suits only (kalooki D4): three 2s with a repeated club stay out.
        (KALOOKI, "9S 10S JS QS KS AS 2C 2C 2D", 6),
        # Two packs: two sets of sevens, the joker completing one of them.
        (KALOOKI, "7H 7H 7S 7S 7D 7C JK", 0),
        # One natural and two jokers make a meld (a run or a set).
        (KALOOKI, "JK JK 9D", 0),
        # Jokers alone are no meld (kalooki D6): 2 x 25.
        (KALOOKI, "JK JK", 50),
        # rummy40's joker costs 20 (D13).
        (RUMMY40, "JK 4C", 24),
        # A joker is kept for the run where it saves more than a set would.
        (KALOOKI, "5C 5D JK 9S 10S", 10),
        # Contract: threes may repeat suits, runs need 4 (contract D3).
        (CONTRACT, "8H 8H 8S 3C 4C 5C", 15),
        (CONTRACT, "8H 8H 8S 3C 4C 5C JK", 0),
        # Gin rummy: ace low only; a card shared by a set and a run goes where it saves most.
        (GIN, "QH KH 5S 5H 5D 4H 6H 3H 2C 9C", 41),
        (GIN, "AH 2H 3H QD KD", 20),
        (GIN, "QD KD AD", 21),
        (GIN, "AS 2S 3S 4S 5H 6H 7H 8C 9C 10C", 0),
        (GIN, "7C 7D 7H 7S 8S 9S 2D 3D 4D KC", 10),
    ],
)
def test_hand_made_examples(params: MeldParams, hand: str, penalty: int) -> None:
    cards = parse_cards(hand)
    assert check_partition(cards, params, MeldSolver(params)) == penalty
    assert oracle_penalty(cards, params) == penalty


def test_thirteen_card_hands_meld_completely() -> None:
    solver = MeldSolver(KALOOKI)
    hand = parse_cards("AH 2H 3H 4H JK 6H 7H 7D 7S 7C QS KS JK")
    assert check_partition(hand, KALOOKI, solver) == 0
    hand = parse_cards("AH 2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH")
    assert check_partition(hand, KALOOKI, solver) == 0


def test_fast_path_matches_general_search_on_random_ten_card_hands() -> None:
    # `penalty` takes the table path for hands without jokers or repeats; `solve` never does.
    rng = random.Random(2)
    for params in (GIN, KALOOKI, ACE_HIGH_ONLY):
        solver = MeldSolver(params)
        for _ in range(300):
            hand = rng.sample(STANDARD_PACK, 10)
            assert solver.penalty(hand) == solver.solve(hand).penalty


def test_bad_hands_are_rejected() -> None:
    with pytest.raises(ValueError, match="no jokers"):
        MeldSolver(GIN).penalty(parse_cards("JK 2C 3C"))
    with pytest.raises(ValueError, match="copies"):
        MeldSolver(KALOOKI).penalty(parse_cards("2C 2C 2C 2C"))
    for solver in (MeldSolver(GIN), MeldSolver(KALOOKI)):
        with pytest.raises(TypeError, match="parse_cards"):
            solver.penalty(["AS", "2S", "3S"])  # type: ignore[list-item]
        with pytest.raises(TypeError, match="parse_cards"):
            solver.solve([*parse_cards("AS 2S"), "3S"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="set sizes"):
        MeldParams("bad", KALOOKI.penalties, 25, set_min=5, set_max=4)


@pytest.mark.parametrize("variant", ["kalooki", "rummy40"])
def test_solved_melds_are_accepted_by_the_engine(variant: str) -> None:
    # The engine's meld validator (melds.make_meld) is written independently of the solver.
    rules = rules_for(variant, 4)
    solver = MeldSolver(params_for(rules))
    rng = random.Random(21)
    pool = list(STANDARD_PACK) * 2 + [JOKER] * rules.jokers
    checked = 0
    for _ in range(300):
        for meld in solver.solve(rng.sample(pool, 13)).melds:
            made = make_meld(meld.cards, rules, meld.kind)
            assert made.kind is meld.kind
            if made.kind is MeldKind.RUN:
                assert tuple(made.represented(i) for i in range(len(made.cards))) == meld.represents
            checked += 1
    assert checked > 100
