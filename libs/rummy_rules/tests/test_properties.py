"""Property tests over random complete games: conservation, legality, replay, hiding, serialisation.

A tiny random-legal chooser plays each game from a hypothesis-drawn seed. It prefers melding and
laying off over discarding so that deals end; every choice comes from `legal_actions`.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rummy_rules.cards import JOKER
from rummy_rules.commands import Command, Discard, DrawFromStock, LayOff, TakeDiscard
from rummy_rules.events import Event
from rummy_rules.game import replay, start
from rummy_rules.state import GameState, Phase

from .playouts import Playout, all_cards, card_not_held


def choose(state: GameState, seat: int, actions: tuple[Command, ...], rng: random.Random) -> Command:
    builds = [action for action in actions if not isinstance(action, Discard)]
    if builds and rng.random() < 0.7:
        return rng.choice(builds)
    return rng.choice(actions)


def illegal_commands(state: GameState, rng: random.Random) -> list[Command]:
    """Commands that must be refused in `state`: wrong seat, wrong phase, a card not held."""
    other = (state.turn + 1) % len(state.hands)
    commands: list[Command] = [DrawFromStock(other), Discard(state.turn, card_not_held(state, rng))]
    if state.phase is Phase.PLAY:
        commands.append(DrawFromStock(state.turn))
        commands.append(TakeDiscard(state.turn))
    else:
        commands.append(Discard(state.turn, state.hands[state.turn][0]))
        commands.append(LayOff(state.turn, 0, (state.hands[state.turn][0],)))
    return commands


def check_result(state: GameState, events: list[Event]) -> None:
    """A finished kalooki or rummy40 game names its winners."""
    assert state.winners


GAMES = Playout(choose, illegal_commands, check_result, own_view_hides_only_in_play=True)


seeds = st.binary(min_size=16, max_size=16)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=seeds, players=st.integers(2, 5))
def test_random_kalooki_games_keep_every_invariant(seed: bytes, players: int) -> None:
    GAMES.play("kalooki", players, seed, thorough=True)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=seeds, players=st.integers(2, 6))
def test_random_rummy40_games_keep_every_invariant(seed: bytes, players: int) -> None:
    GAMES.play("rummy40", players, seed, thorough=True, deals_per_match=1)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=seeds,
    options=st.fixed_dictionaries(
        {
            "opening_min_points": st.sampled_from([0, 40, 51]),
            "freed_joker_must_be_used_same_turn": st.booleans(),
            "discard_draw_before_opening": st.sampled_from(["free", "must_use_in_opening"]),
            "ace_low_in_runs": st.booleans(),
            "match_mode": st.sampled_from(["single_deal", "elimination"]),
        }
    ),
)
def test_random_kalooki_games_with_house_rules(seed: bytes, options: dict[str, int | bool | str]) -> None:
    GAMES.play("kalooki", 3, seed, thorough=True, **options)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=seeds,
    options=st.fixed_dictionaries(
        {
            "layoff_on_others": st.booleans(),
            "go_out_by_discard": st.booleans(),
            "exchanged_joker_must_be_used_same_turn": st.booleans(),
            "opening_single_meld": st.booleans(),
            "deals_per_match": st.integers(1, 2),
        }
    ),
)
def test_random_rummy40_games_with_house_rules(seed: bytes, options: dict[str, int | bool | str]) -> None:
    GAMES.play("rummy40", 4, seed, thorough=True, **options)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=seeds, players=st.integers(2, 5))
def test_thousand_kalooki_games_with_cards_conserved(seed: bytes, players: int) -> None:
    GAMES.play("kalooki", players, seed, thorough=False)


def test_random_games_always_finish() -> None:
    """Random play reaches deals nobody can go out of; meldstream M1 ends them, so every game ends
    (`Playout.play` asserts it), whole rummy40 matches included."""
    for n in range(20):
        for variant in ("kalooki", "rummy40"):
            GAMES.play(variant, 2 + n % 3, n.to_bytes(16, "big"), thorough=False)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=seeds, players=st.integers(2, 6))
def test_thousand_rummy40_deals_with_cards_conserved(seed: bytes, players: int) -> None:
    GAMES.play("rummy40", players, seed, thorough=False, deals_per_match=1)


def test_joker_count_matches_variant_deck() -> None:
    state = replay([start("rummy40", 4, bytes(16))])
    assert all_cards(state)[JOKER] == 4  # rummy40 D1: two packs, four jokers
