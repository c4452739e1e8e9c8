"""Table-driven meld rules per variant: shapes, values, layoffs, joker retrieval, penalties."""

from __future__ import annotations

import random

import pytest
from rummy_rules.cards import make_deck, parse_cards
from rummy_rules.errors import RuleViolation
from rummy_rules.melds import (
    End,
    MeldKind,
    find_melds,
    hand_penalty,
    lay_off,
    make_meld,
    meld_options,
    meld_value,
    swap_joker,
)
from rummy_rules.variants import rules_for

KALOOKI = rules_for("kalooki", 4)
RUMMY40 = rules_for("rummy40", 4)


@pytest.mark.parametrize(
    ("cards", "valid", "value"),
    [
        ("7H 7S 7D", True, 21),  # kalooki D4
        ("7H 7H 7S", False, None),  # D4: no repeated suit
        ("10H 10S JK", True, 30),  # src ¶4: joker takes the missing ten's value
        ("QH KH AH", True, 31),  # D3: ace high 11
        ("AH 2H 3H", True, 6),  # D3: ace low 1
        ("KH AH 2H", False, None),  # D5: no wrap-around
        ("5H 6H JK", True, 18),  # D6: joker is 7H
        ("9C 9D 9H 9S JK", False, None),  # D4: at most 4
        ("JK JK", False, None),  # D6: needs a natural card
        ("5H 6H", False, None),  # §3.5.2: at least 3
        ("5H 6S 7H", False, None),  # one suit
        ("JK AH 2H", False, None),  # nothing below the low ace
        ("10H JH QH KH AH", True, 51),
        ("AC AD AH", True, 33),  # ace in a set is 11
    ],
)
def test_kalooki_meld_shape_and_value(cards: str, valid: bool, value: int | None) -> None:
    if not valid:
        with pytest.raises(RuleViolation):
            make_meld(parse_cards(cards), KALOOKI)
        return
    assert meld_value(make_meld(parse_cards(cards), KALOOKI), KALOOKI) == value


@pytest.mark.parametrize(
    ("cards", "valid", "value"),
    [
        ("QS KS AS", True, 31),  # src S12
        ("AS 2S 3S", True, 6),  # src S12
        ("AC AD AH", True, 33),  # D3
        ("JK 2S 3S", True, 6),  # D15: joker as low ace counts 1
        ("7H 7D JK", True, 21),  # src S14
        ("5C 5C 5D", False, None),  # D4
        ("8D 9D", False, None),  # src S11
    ],
)
def test_rummy40_meld_shape_and_value(cards: str, valid: bool, value: int | None) -> None:
    if not valid:
        with pytest.raises(RuleViolation):
            make_meld(parse_cards(cards), RUMMY40)
        return
    assert meld_value(make_meld(parse_cards(cards), RUMMY40), RUMMY40) == value


def test_meld_requires_kind_when_one_natural_reads_both_ways() -> None:
    with pytest.raises(RuleViolation) as refused:
        make_meld(parse_cards("JK JK 5H"), KALOOKI)
    assert refused.value.code == "ambiguous_meld"
    assert meld_value(make_meld(parse_cards("JK JK 5H"), KALOOKI, MeldKind.RUN), KALOOKI) == 12
    assert meld_value(make_meld(parse_cards("JK JK 5H"), KALOOKI, MeldKind.SET), KALOOKI) == 15


def test_ace_low_rejected_when_option_ace_low_in_runs_is_off() -> None:
    rules = rules_for("kalooki", 3, ace_low_in_runs=False)
    with pytest.raises(RuleViolation):
        make_meld(parse_cards("AH 2H 3H"), rules)
    assert make_meld(parse_cards("QH KH AH"), rules).kind is MeldKind.RUN


def test_repeated_suits_allowed_in_natural_sets_only_with_option() -> None:
    rules = rules_for("kalooki", 3, allow_repeated_suits_in_natural_sets=True)
    assert make_meld(parse_cards("7H 7H 7S"), rules).kind is MeldKind.SET
    with pytest.raises(RuleViolation):
        make_meld(parse_cards("7H 7H JK"), rules)  # src ¶11: never with a joker


@pytest.mark.parametrize(
    ("meld", "cards", "at", "result"),
    [
        ("7H 7S 7D", "7C", None, "7H 7S 7D 7C"),  # kalooki D20
        ("7H 7S 7D", "7H", None, None),  # D4
        ("5H 6H 7H", "8H 9H", None, "5H 6H 7H 8H 9H"),  # §3.7.3
        ("QD KD AD", "2D", None, None),  # D5
        ("10H 10S JK", "10C", None, "10H 10S JK 10C"),  # src ¶13: closes the set
        ("7H 7S 7D", "JK", None, "7H 7S 7D JK"),  # D23
        ("7H 7S 7D 7C", "JK", None, None),  # a 4-card set takes nothing
        ("5H 6H 7H", "JK", "low", "JK 5H 6H 7H"),
        ("5H 6H 7H", "JK", "high", "5H 6H 7H JK"),
        ("5H 6H 7H", "JK", None, None),  # which end is required
        ("5H 6H 7H", "JK 9H", None, "5H 6H 7H JK 9H"),
        ("2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH", "AH", "low", "AH 2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH"),
    ],
)
def test_kalooki_lay_off(meld: str, cards: str, at: str | None, result: str | None) -> None:
    base = make_meld(parse_cards(meld), KALOOKI)
    end = End(at) if at else None
    if result is None:
        with pytest.raises(RuleViolation):
            lay_off(base, parse_cards(cards), KALOOKI, end)
        return
    assert sorted(lay_off(base, parse_cards(cards), KALOOKI, end).cards) == sorted(parse_cards(result))


@pytest.mark.parametrize(
    ("meld", "cards", "result"),
    [
        ("10H 10S JK", "10D 10C", "10H 10S 10D 10C"),  # kalooki §3.8.2 src ¶12-¶13
        ("10H 10S JK", "10D", None),  # one card only closes (a layoff)
        ("10H 10S 10C JK", "10D", None),  # §3.8.4 closed set
        ("5H JK 7H", "6H", "5H 6H 7H"),  # §3.8.1 D12 exact card
        ("5H JK 7H", "6D", None),
        ("10H JK JK", "10D 10C", "10H 10D 10C JK"),  # D11: two naturals free one joker, set closed
        ("10H JK JK", "10D 10C 10S", None),  # D11: not three
        ("10H 10S JK", "10D 10H", None),  # suits must be the missing ones
    ],
)
def test_kalooki_joker_release(meld: str, cards: str, result: str | None) -> None:
    base = make_meld(parse_cards(meld), KALOOKI, MeldKind.SET if "10" in meld else None)
    if result is None:
        with pytest.raises(RuleViolation):
            swap_joker(base, parse_cards(cards), KALOOKI)
        return
    assert sorted(swap_joker(base, parse_cards(cards), KALOOKI).cards) == sorted(parse_cards(result))


@pytest.mark.parametrize(
    ("meld", "cards", "result"),
    [
        ("5H JK 7H", "6H", "5H 6H 7H"),  # rummy40 §3.8.2
        ("7H 7D JK", "7C", "7H 7D 7C"),  # any missing suit
        ("7H 7D JK", "7H", None),  # suit already there
        ("7H 7D 7S JK", "7C", "7H 7D 7S 7C"),  # no closed sets in rummy40
        ("5H 6H 7H", "8H", None),  # no joker
    ],
)
def test_rummy40_joker_exchange(meld: str, cards: str, result: str | None) -> None:
    base = make_meld(parse_cards(meld), RUMMY40)
    if result is None:
        with pytest.raises(RuleViolation):
            swap_joker(base, parse_cards(cards), RUMMY40)
        return
    assert sorted(swap_joker(base, parse_cards(cards), RUMMY40).cards) == sorted(parse_cards(result))


@pytest.mark.parametrize(
    ("variant", "cards", "penalty"),
    [
        ("kalooki", "AH KS 5D", 26),  # src ¶20 D15
        ("kalooki", "JK 2C", 27),  # src ¶4
        ("rummy40", "AH JK 5C", 36),  # src S20
        ("rummy40", "KH QD JS 10C", 40),  # D13
    ],
)
def test_hand_penalty(variant: str, cards: str, penalty: int) -> None:
    assert hand_penalty(parse_cards(cards), rules_for(variant, 4)) == penalty


def test_find_melds_offers_only_valid_melds_from_the_hand() -> None:
    hand = parse_cards("5H 6H 7H 8H 10H JK KS KD KC 2C 3C AC QH 9D")
    found = find_melds(hand, KALOOKI)
    texts = {
        str(meld) if meld.kind is MeldKind.RUN else " ".join(sorted(str(meld).split())) for meld in found
    }
    assert {"KC KD KS", "5H 6H 7H 8H", "AC 2C 3C", "10H JK QH"} <= texts
    for meld in found:
        assert make_meld(meld.cards, KALOOKI, meld.kind) == meld
        assert all(meld.cards.count(card) <= hand.count(card) for card in meld.cards)


@pytest.mark.parametrize(
    ("variant", "players", "options"),
    [("kalooki", 3, {}), ("kalooki", 3, {"ace_low_in_runs": False}), ("rummy40", 4, {}), ("contract", 4, {})],
)
def test_meld_options_layoffs_equal_lay_off(variant: str, players: int, options: dict[str, bool]) -> None:
    """meld_options builds natural run layoffs directly; each must be exactly what lay_off makes."""
    rules = rules_for(variant, players, **options)
    deck = make_deck(rules.packs, rules.jokers)
    rng = random.Random(variant)
    checked = 0
    for _ in range(300):
        for meld in find_melds(rng.sample(deck, 14), rules):
            for card, at, result in meld_options(meld, rules).layoffs:
                assert result == lay_off(meld, (card,), rules, at)
                checked += 1
    assert checked > 1000


@pytest.mark.parametrize(
    ("variant", "players", "options"),
    [
        ("kalooki", 3, {}),
        ("rummy40", 2, {"allow_repeated_suits_in_sets": True}),
        ("contract", 4, {}),
        ("rummy500", 2, {}),
    ],
)
def test_meld_options_list_every_single_card_lay_off_accepts(
    variant: str, players: int, options: dict[str, bool]
) -> None:
    """The game asks meld_options, not lay_off, whether a last card fits a meld (rummy40 D11)."""
    rules = rules_for(variant, players, **options)
    deck = make_deck(rules.packs, rules.jokers)
    cards = sorted(set(deck), key=lambda card: card.code)
    rng = random.Random(variant)
    accepted = 0
    for _ in range(25):
        for meld in find_melds(rng.sample(deck, 14), rules):
            listed = {card for card, _, _ in meld_options(meld, rules).layoffs}
            for card in cards:
                fits = False
                for at in (End.LOW, End.HIGH):
                    try:
                        lay_off(meld, (card,), rules, at)
                    except RuleViolation:
                        continue
                    fits = True
                accepted += fits
                assert fits == (card in listed), f"{card.text} on {meld}"
    assert accepted > 100
