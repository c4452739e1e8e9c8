"""Rummy 500 rules without a game: deep picks, per-card credit, deal scores, game end, settlement."""

from __future__ import annotations

import pytest
from rummy_rules.cards import parse_cards
from rummy_rules.errors import RuleViolation
from rummy_rules.melds import lay_off, make_meld
from rummy_rules.rummy500_rules import (
    card_credits,
    credited_points,
    deal_score,
    game_winner,
    layoff_credit,
    pile_pick,
    settlement,
)
from rummy_rules.variants import rules_for

R500 = rules_for("rummy500", 3)


def test_pile_pick_takes_the_selected_card_and_everything_above() -> None:
    pile = parse_cards("4C 9H KD 2S")
    assert pile_pick(pile, 1) == parse_cards("9H KD 2S")  # src ¶17
    assert pile_pick(pile, 3) == parse_cards("2S")


@pytest.mark.parametrize("index", [-1, 4, "1"])
def test_pile_pick_refuses_positions_outside_the_pile(index: object) -> None:
    with pytest.raises(RuleViolation) as err:
        pile_pick(parse_cards("4C 9H KD 2S"), index)  # type: ignore[arg-type]
    assert err.value.code == "no_such_pile_card"


@pytest.mark.parametrize(
    ("meld", "credits"),
    [
        ("AH 2H 3H", (1, 2, 3)),  # D3: low ace 1
        ("QH KH AH", (10, 10, 15)),  # high ace 15
        ("AC AD AS", (15, 15, 15)),  # aces in a set 15
        ("7C 7D 7H 7S", (7, 7, 7, 7)),
    ],
)
def test_card_credits_follow_position(meld: str, credits: tuple[int, ...]) -> None:
    assert card_credits(make_meld(parse_cards(meld), R500), R500) == credits


@pytest.mark.parametrize(
    ("meld", "cards", "credit"),
    [
        ("2S 3S 4S", "AS", 1),  # D16: an ace laid off low scores 1
        ("QH KH AH", "JH", 10),
        ("JH QH KH", "AH", 15),  # an ace laid off high scores 15
        ("9D 9H 9S", "9C", 9),
    ],
)
def test_layoff_credit_is_the_value_added(meld: str, cards: str, credit: int) -> None:
    before = make_meld(parse_cards(meld), R500)
    after = lay_off(before, parse_cards(cards), R500)
    assert layoff_credit(before, after, R500) == credit


def test_credited_points_count_only_the_seats_own_cards() -> None:
    meld = make_meld(parse_cards("AS 2S 3S 4S"), R500)  # seat 1 laid off the ace
    assert credited_points([meld], [(1, 0, 0, 0)], 3, R500) == [9, 1, 0]


def test_seed_example_scores_minus_three() -> None:
    # src ¶10: 87 on the table, 90 in hand.
    hand = parse_cards("AS AC AD AH KC QS JD")
    assert deal_score(87, hand, R500) == -3


@pytest.mark.parametrize(
    ("scores", "winner"),
    [
        ({"A": 510, "B": 480, "C": 505}, "A"),  # src ¶11: highest wins
        ({"A": 495, "B": 470}, None),
        ({"A": 520, "B": 520, "C": 10}, None),  # D13: shared top score, play on
        ({"A": 500, "B": -20}, "A"),
    ],
)
def test_game_winner(scores: dict[str, int], winner: str | None) -> None:
    assert game_winner(scores, 500) == winner


def test_settlement_pays_the_differences_even_beyond_500() -> None:
    assert settlement({"A": 510, "B": 480, "C": -40}, "A") == {"B": 30, "C": 550}  # D14
