"""Multi-table contract rummy: forming tables of 3-4 and moving closers (contract §3.14, D19)."""

from __future__ import annotations

import pytest
from rummy_rules.errors import RuleViolation
from rummy_rules.tables import fallback_mover, form_tables, next_dealer_seat, rotate_tables, table_sizes


@pytest.mark.parametrize(
    ("players", "sizes"),
    [
        (7, (7,)),
        (8, (4, 4)),
        (9, (3, 3, 3)),
        (10, (4, 3, 3)),
        (11, (4, 4, 3)),
        (13, (4, 3, 3, 3)),
        (17, (4, 4, 3, 3, 3)),
    ],
)
def test_table_sizes_are_balanced_threes_and_fours(players: int, sizes: tuple[int, ...]) -> None:
    assert table_sizes(players) == sizes


def test_split_from_option_and_impossible_splits() -> None:
    assert table_sizes(6, split_from=5) == (3, 3)
    with pytest.raises(RuleViolation) as err:
        table_sizes(5, split_from=5)
    assert err.value.code == "cannot_split"


def test_form_tables_seats_everyone_once_from_the_seed() -> None:
    players = [f"p{i}" for i in range(10)]
    tables = form_tables(players, b"s" * 16)
    assert sorted(p for table in tables for p in table) == sorted(players)
    assert [len(table) for table in tables] == [4, 3, 3]
    assert form_tables(players, b"s" * 16) == tables
    assert form_tables(players, b"t" * 16) != tables


def test_closers_move_on_and_take_the_vacated_seat() -> None:
    tables = {"T1": ["a", "b", "c", "d"], "T2": ["e", "f", "g"], "T3": ["h", "i", "j", "k"]}
    result = rotate_tables(tables, {"T1": "b", "T2": "g", "T3": "h"})
    assert result == {"T1": ["a", "h", "c", "d"], "T2": ["e", "f", "b"], "T3": ["g", "i", "j", "k"]}


def test_table_without_closer_sends_its_lowest_scorer() -> None:
    tables = {"T1": ["a", "b", "c"], "T2": ["d", "e", "f"]}
    scores = {"a": 5, "b": 30, "c": 20, "d": 40, "e": 10, "f": 10}
    # T2: e and f tie on 10; the dealer sits at seat 1 (e), so f (dealer's left) moves first.
    result = rotate_tables(tables, {"T1": "a", "T2": None}, scores, {"T1": 0, "T2": 1})
    assert result == {"T1": ["f", "b", "c"], "T2": ["d", "e", "a"]}
    with pytest.raises(RuleViolation) as err:
        rotate_tables(tables, {"T1": "a", "T2": None})
    assert err.value.code == "no_closer"


def test_fallback_mover_counts_the_dealer_last() -> None:
    assert fallback_mover(["a", "b", "c"], {"a": 0, "b": 0, "c": 0}, 2) == "a"
    assert fallback_mover(["a", "b", "c"], {"a": 0, "b": 0, "c": 0}, 0) == "b"


def test_closer_from_another_table_is_refused() -> None:
    with pytest.raises(RuleViolation):
        rotate_tables({"T1": ["a", "b", "c"], "T2": ["d", "e", "f"]}, {"T1": "d", "T2": "e"})


def test_dealer_passes_by_seat() -> None:
    assert next_dealer_seat(3, 4) == 0
    assert next_dealer_seat(1, 3) == 2
