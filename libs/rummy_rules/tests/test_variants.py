"""Variant parameters: spec §5 defaults, table sizes, packs, and refusals of unknown input."""

from __future__ import annotations

import pytest
from rummy_rules.errors import RuleViolation
from rummy_rules.state import MAX_SEATS
from rummy_rules.variants import VARIANTS, GoingOut, JokerSwap, MatchMode, Reshuffle, rules_for


@pytest.mark.parametrize(
    ("variant", "players", "packs", "jokers"),
    [
        ("kalooki", 2, 2, 2),  # kalooki src ¶2
        ("kalooki", 5, 2, 2),
        ("rummy40", 3, 1, 2),  # rummy40 D1
        ("rummy40", 4, 2, 4),
        ("rummy500", 4, 1, 0),
        ("contract", 5, 3, 6),
    ],
)
def test_packs_and_jokers_follow_table_size(variant: str, players: int, packs: int, jokers: int) -> None:
    rules = rules_for(variant, players)
    assert (rules.packs, rules.jokers) == (packs, jokers)


def test_kalooki_defaults_follow_spec_section_5() -> None:
    rules = rules_for("kalooki", 4)
    assert rules.opening_min_points == 40  # D7
    assert rules.penalty[0] == 25 and rules.penalty[1] == 11  # src ¶4, ¶20
    assert rules.joker_swap is JokerSwap.KALOOKI and rules.freed_joker_must_be_used  # D10
    assert rules.going_out is GoingOut.DISCARD_REQUIRED  # src ¶18
    assert rules.reshuffle is Reshuffle.KEEP_LAST_DISCARD  # D18
    assert rules.match_mode is MatchMode.SINGLE_DEAL and rules.kalooki_surcharge == 25  # D16


def test_rummy40_defaults_follow_spec_section_5() -> None:
    rules = rules_for("rummy40", 4)
    assert rules.penalty[0] == 20 and not rules.upcard  # src S20, §3.3.3
    assert not rules.layoff_on_others and not rules.freed_joker_must_be_used  # D9, D10
    assert rules.going_out is GoingOut.MELD_ALL and rules.reshuffle is Reshuffle.ALL_AT_ONCE  # D11, D12
    assert rules_for("rummy40", 4, go_out_by_discard=True).going_out is GoingOut.EITHER


@pytest.mark.parametrize(
    ("variant", "players", "options", "code"),
    [
        ("poker", 4, {}, "unknown_variant"),
        ("kalooki", 1, {}, "bad_player_count"),
        ("kalooki", 6, {}, "bad_player_count"),  # D1
        ("rummy40", 7, {}, "bad_player_count"),  # D1
        ("kalooki", 4, {"opening_minimum": 40}, "unknown_option"),
        ("kalooki", 4, {"opening_min_points": "40"}, "bad_option_value"),
        ("kalooki", 4, {"ace_low_in_runs": 1}, "bad_option_value"),
        ("kalooki", 4, {"match_mode": "knockout"}, "bad_option_value"),
        ("kalooki", 4, {"match_mode": "elimination", "prize_pool": 100}, "bad_option_value"),
        ("rummy40", 6, {"packs": 1}, "bad_option_value"),
        ("rummy40", 4, {"deals_per_match": 0}, "bad_option_value"),
    ],
)
def test_rules_for_refuses_bad_input(
    variant: str, players: int, options: dict[str, object], code: str
) -> None:
    with pytest.raises(RuleViolation) as refused:
        rules_for(variant, players, **options)
    assert refused.value.code == code


def test_one_rules_object_per_table_kind_and_still_every_refusal() -> None:
    """rules_for builds a table kind's Rules once (memos keyed by its identity carry across games);
    equal keys of another type (True for 1, 2.0 for 2) are still refused as before."""
    assert rules_for("rummy500", 2, jokers=1) is rules_for("rummy500", 2, jokers=1)
    assert rules_for("rummy500", 2, jokers=1) is not rules_for("rummy500", 2, jokers=2)
    assert rules_for("rummy500", 2, jokers=1) is not rules_for("rummy500", 3, jokers=1)
    for players, options in ((2, {"jokers": True}), (2.0, {"jokers": 1}), (2, {"jokers": [1]})):
        with pytest.raises(RuleViolation):
            rules_for("rummy500", players, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("variant", VARIANTS)
def test_no_table_seats_more_than_the_prebuilt_seat_tables_hold(variant: str) -> None:
    """Commands and events are prebuilt per seat over `state.SEATS` (`MAX_SEATS`): a table past it is
    refused."""
    largest = max(size for size in range(2, MAX_SEATS + 3) if _seats(variant, size))
    assert largest <= MAX_SEATS


def _seats(variant: str, players: int) -> bool:
    """Whether some table of `variant` seats `players`, with the defaults or rummy500's two packs."""
    for options in ({}, {"packs": 2}):
        try:
            rules_for(variant, players, **options)
            return True
        except RuleViolation:
            pass
    return False
