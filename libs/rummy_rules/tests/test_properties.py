"""Property tests over random complete games: conservation, legality, replay, hiding, serialisation.

A tiny random-legal chooser plays each game from a hypothesis-drawn seed. It prefers melding and
laying off over discarding so that deals end; every choice comes from `legal_actions`.
"""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rummy_rules.cards import JOKER, STANDARD_PACK, make_deck
from rummy_rules.commands import Command, Discard, DrawFromStock, LayOff, TakeDiscard
from rummy_rules.errors import RuleViolation
from rummy_rules.events import Event
from rummy_rules.game import decide, evolve, legal_actions, replay, start
from rummy_rules.serialize import from_dict, to_dict
from rummy_rules.state import GameState, Phase
from rummy_rules.views import observe

MAX_DECISIONS = 30_000  # a guard only: every game must finish (meldstream M1 ends stalled deals)


def choose(actions: tuple[Command, ...], rng: random.Random) -> Command:
    builds = [action for action in actions if not isinstance(action, Discard)]
    if builds and rng.random() < 0.7:
        return rng.choice(builds)
    return rng.choice(actions)


def all_cards(state: GameState) -> Counter[object]:
    cards: Counter[object] = Counter()
    for hand in state.hands:
        cards.update(hand)
    cards.update(state.stock)
    cards.update(state.discard)
    for meld in state.melds:
        cards.update(meld.cards)
    return cards


def illegal_commands(state: GameState, rng: random.Random) -> list[Command]:
    """Commands that must be refused in `state`: wrong seat, wrong phase, a card not held."""
    other = (state.turn + 1) % len(state.hands)
    held = set(state.hands[state.turn])
    missing = [card for card in STANDARD_PACK if card not in held]
    commands: list[Command] = [DrawFromStock(other), Discard(state.turn, rng.choice(missing))]
    if state.phase is Phase.PLAY:
        commands.append(DrawFromStock(state.turn))
        commands.append(TakeDiscard(state.turn))
    else:
        commands.append(Discard(state.turn, state.hands[state.turn][0]))
        commands.append(LayOff(state.turn, 0, (state.hands[state.turn][0],)))
    return commands


def hidden_shuffled(state: GameState, seat: int, rng: random.Random) -> GameState:
    """The same public position with every card `seat` cannot see dealt differently."""
    others = [i for i in range(len(state.hands)) if i != seat]
    pool = [card for i in others for card in state.hands[i]] + list(state.stock)
    rng.shuffle(pool)
    hands = list(state.hands)
    for i in others:
        hands[i], pool = tuple(pool[: len(hands[i])]), pool[len(hands[i]) :]
    return state._replace(hands=tuple(hands), stock=tuple(pool))


def play(variant: str, players: int, seed: bytes, thorough: bool, **options: int | bool | str) -> GameState:
    rng = random.Random(seed)
    first = start(variant, players, seed, **options)
    events: list[Event] = [first]
    state = evolve(None, first)
    replayed = state
    deck = Counter(make_deck(state.rules.packs, state.rules.jokers))
    decisions = 0
    while state.phase is not Phase.GAME_OVER and decisions < MAX_DECISIONS:
        seat = state.turn
        assert all(not legal_actions(state, other) for other in range(players) if other != seat)
        actions = legal_actions(state, seat)
        assert actions, f"no legal action for seat {seat} in {state.phase}"
        action = choose(actions, rng)
        produced = decide(state, action)
        if thorough:
            if decisions % 10 == 0:
                assert from_dict(json.loads(json.dumps(to_dict(action)))) == action
                view = observe(state, seat)
                assert from_dict(json.loads(json.dumps(to_dict(view)))) == view
            for probe in rng.sample(actions, min(3, len(actions))):
                decide(state, probe)  # every legal action is accepted
            for command in illegal_commands(state, rng):
                with pytest.raises(RuleViolation):
                    decide(state, command)
            for viewer in (seat, None):
                if viewer is None or state.phase is Phase.PLAY:
                    secret = hidden_shuffled(state, seat if viewer is not None else -1, rng)
                    assert observe(secret, viewer) == observe(state, viewer)  # observation hides
        for event in produced:
            state = evolve(state, event)
            events.append(event)
            if thorough:
                wire = json.loads(json.dumps(to_dict(event)))
                replayed = evolve(replayed, from_dict(wire))
                assert replayed == state
                if len(events) % 25 == 0 or state.phase is Phase.GAME_OVER:
                    assert from_dict(json.loads(json.dumps(to_dict(state)))) == state
            if state.phase in (Phase.DRAW, Phase.PLAY) and (thorough or len(events) % 8 == 0):
                assert all_cards(state) == deck  # cards are never created or lost
        decisions += 1
    assert replay(events) == state
    assert all_cards(state) == deck
    assert state.phase is Phase.GAME_OVER, f"{variant} stopped at {decisions} decisions"
    assert observe(state, None).seed == seed  # revealed at the end
    assert state.winners
    return state


seeds = st.binary(min_size=16, max_size=16)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=seeds, players=st.integers(2, 5))
def test_random_kalooki_games_keep_every_invariant(seed: bytes, players: int) -> None:
    play("kalooki", players, seed, thorough=True)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=seeds, players=st.integers(2, 6))
def test_random_rummy40_games_keep_every_invariant(seed: bytes, players: int) -> None:
    play("rummy40", players, seed, thorough=True, deals_per_match=1)


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
    play("kalooki", 3, seed, thorough=True, **options)


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
    play("rummy40", 4, seed, thorough=True, **options)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=seeds, players=st.integers(2, 5))
def test_thousand_kalooki_games_with_cards_conserved(seed: bytes, players: int) -> None:
    play("kalooki", players, seed, thorough=False)


def test_random_games_always_finish() -> None:
    """Random play reaches deals nobody can go out of; meldstream M1 ends them, so every game ends
    (`play` asserts it), whole rummy40 matches included."""
    for n in range(20):
        for variant in ("kalooki", "rummy40"):
            play(variant, 2 + n % 3, n.to_bytes(16, "big"), thorough=False)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=seeds, players=st.integers(2, 6))
def test_thousand_rummy40_deals_with_cards_conserved(seed: bytes, players: int) -> None:
    play("rummy40", players, seed, thorough=False, deals_per_match=1)


def test_joker_count_matches_variant_deck() -> None:
    state = replay([start("rummy40", 4, bytes(16))])
    assert all_cards(state)[JOKER] == 4  # rummy40 D1: two packs, four jokers
