"""Contract rummy rules without a game: the eight contracts, buying and buy disputes."""

from __future__ import annotations

import pytest
from rummy_rules.cards import Card, parse_card, parse_cards
from rummy_rules.contract_rules import (
    CONTRACTS,
    BuyRole,
    buy_penalty,
    check_contract,
    dispute_winner,
    round_penalty,
    settle_dispute,
)
from rummy_rules.errors import RuleViolation
from rummy_rules.variants import rules_for

CONTRACT = rules_for("contract", 4)


def groups(*texts: str) -> list[tuple[Card, ...]]:
    return [parse_cards(text) for text in texts]


def test_eight_contracts_in_seed_order() -> None:
    shapes = [(c.runs, c.threes) for c in CONTRACTS]
    assert shapes == [(1, 1), (0, 2), (2, 0), (1, 2), (2, 1), (0, 3), (3, 0), (2, 2)]  # src ¶34-¶41
    assert [c.min_cards for c in CONTRACTS] == [7, 6, 8, 10, 11, 9, 12, 14]


@pytest.mark.parametrize(
    ("round_number", "melds", "code"),
    [
        (1, ("5H 6H 7H 8H", "9C 9D 9S"), None),
        (1, ("5H 6H 7H", "9C 9D 9S"), "meld_too_short"),  # runs of 4+
        (2, ("4C 4C 4D", "KH KS KS"), None),  # repeated suits
        (2, ("4C 4D 4H", "4S 4C JK"), "threes_same_rank"),  # D6
        (3, ("2H 3H 4H 5H", "9H 10H JH QH"), "runs_same_suit"),  # src ¶16
        (1, ("5H 6H 7H 8H", "9C 9D 9S", "KC KD KH"), "not_the_contract"),  # D7
        (6, ("5H 5S 5D", "6C 6C 6D", "JK JK 7S"), None),
        (1, ("JK 6H JK JK", "9C 9D 9S"), None),  # read as a run: that makes the contract
        (2, ("JK 6H JK JK", "9C 9D 9S"), None),  # read as a three
        (1, ("JK JK JK", "9C 9D 9S"), "meld_without_natural"),  # D5
    ],
)
def test_contract_laydowns(round_number: int, melds: tuple[str, ...], code: str | None) -> None:
    if code is None:
        check_contract(groups(*melds), round_number, CONTRACT)
    else:
        with pytest.raises(RuleViolation) as err:
            check_contract(groups(*melds), round_number, CONTRACT)
        assert err.value.code == code


def test_round_eight_needs_the_whole_hand() -> None:
    melds = ("AH 2H 3H 4H", "9S 10S JS QS", "5C 5D 5D", "KH KC JK")
    hand = parse_cards(" ".join(melds))
    check_contract(groups(*melds), 8, CONTRACT, hand=hand)
    with pytest.raises(RuleViolation) as err:
        check_contract(groups(*melds), 8, CONTRACT, hand=(*hand, parse_card("2C")))
    assert err.value.code == "whole_hand_required"


def test_min_natural_cards_option() -> None:
    strict = rules_for("contract", 4, min_natural_cards_per_meld=2)
    with pytest.raises(RuleViolation) as err:
        check_contract(groups("5H 6H 7H 8H", "9C JK JK"), 1, strict)
    assert err.value.code == "too_few_naturals"


@pytest.mark.parametrize(
    ("round_number", "before", "role", "result"),
    [
        (3, 0, BuyRole.OTHER, 0),
        (3, 2, BuyRole.OTHER, 0),
        (3, 3, BuyRole.OTHER, 200),  # src ¶24, D13
        (3, 4, BuyRole.OTHER, "too_many_buys"),  # D13: fifth refused
        (8, 0, BuyRole.OTHER, "no_buying_in_round_8"),  # src ¶30
        (1, 0, BuyRole.FOREHAND, "forehand_cannot_buy"),
        (1, 0, BuyRole.DISCARDER, "discarder_cannot_buy"),
    ],
)
def test_buy_legality_and_cost(round_number: int, before: int, role: BuyRole, result: int | str) -> None:
    if isinstance(result, int):
        assert buy_penalty(round_number, before, role, CONTRACT) == result
    else:
        with pytest.raises(RuleViolation) as err:
            buy_penalty(round_number, before, role, CONTRACT)
        assert err.value.code == result


def test_fourth_buy_rejected_by_option() -> None:
    strict = rules_for("contract", 4, fourth_buy="reject")
    with pytest.raises(RuleViolation):
        buy_penalty(2, 3, BuyRole.OTHER, strict)


@pytest.mark.parametrize(
    ("draws", "winner"),
    [
        ({"P2": "KH", "P3": "AS"}, "P3"),  # D14: ace high
        ({"P2": "JK", "P3": "AS"}, "P2"),  # src ¶28: joker always wins
        ({"P2": "QH", "P3": "QS", "P4": "2C"}, None),  # shared best: draw again
        ({"P2": "JK", "P3": "JK"}, None),
    ],
)
def test_dispute_winner(draws: dict[str, str], winner: str | None) -> None:
    assert dispute_winner({player: parse_card(card) for player, card in draws.items()}) == winner


def test_settle_dispute_redraws_ties_and_returns_cards_to_the_middle() -> None:
    stock = parse_cards("2C 3C 4C 5C 6C 7C KH QD QS")  # top last: QS, QD, then KH
    winner, rounds, after = settle_dispute(stock, ["a", "b"])
    assert rounds == (parse_cards("QS QD"), parse_cards("KH 7C"))
    assert winner == "a"
    # four cards drawn, five left: floor(5/2) = 2 stay above the returned cards.
    assert after == parse_cards("2C 3C 4C QS QD KH 7C 5C 6C")
    assert sorted(after) == sorted(stock)


def test_round_penalty_adds_200_after_a_fourth_buy() -> None:
    assert round_penalty(15, 3, CONTRACT) == 15
    assert round_penalty(15, 4, CONTRACT) == 215
