"""The benchmark's peers, measured the way their own users drive them: OpenSpiel and RLCard gin rummy.

Each function runs one peer for a time budget and returns counts and seconds; a missing package
raises `PeerMissing` with the install command, so the benchmark can say so and carry on. The
peers are optional (`requirements/bench.txt`) and imported only here, never by the engine.
"""

from __future__ import annotations

import importlib
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rummy_rules.cards import Card

INSTALL_HINT = "pip install -r requirements/bench.txt"


class PeerMissing(Exception):
    """A peer package is not installed; the message says which and how to install it."""


@dataclass(frozen=True, slots=True)
class Playouts:
    """Random-legal complete games: how many, how many decisions, in how many seconds."""

    games: int
    decisions: int
    seconds: float


@dataclass(frozen=True, slots=True)
class Solved:
    """`count` hands solved in `seconds`; `values` the deadwood of the first pass, in order."""

    values: tuple[int, ...]
    count: int
    seconds: float


def _load(module: str, package: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise PeerMissing(f"{package} is not installed ({exc}); {INSTALL_HINT}") from None


# --- OpenSpiel ------------------------------------------------------------------------------------


def openspiel_playouts(budget: float, seed: int) -> tuple[Playouts, list[list[int]]]:
    """Random playouts of `gin_rummy`: `legal_actions()` + `apply_action()` per decision.

    Chance nodes (the deal, stock draws) are sampled from `chance_outcomes()`; their time is
    included, but only player decisions are counted. Also returns every game's action history
    (chance outcomes included) for the replay figure.
    """
    pyspiel = _load("pyspiel", "open_spiel")
    game = pyspiel.load_game("gin_rummy")
    rng = random.Random(seed)
    games = decisions = 0
    histories: list[list[int]] = []
    began = time.perf_counter()
    while time.perf_counter() - began < budget:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
            else:
                legal = state.legal_actions()
                state.apply_action(legal[rng.randrange(len(legal))])
                decisions += 1
        games += 1
        histories.append(state.history())
    return Playouts(games, decisions, time.perf_counter() - began), histories


def openspiel_replay(histories: Sequence[Sequence[int]]) -> tuple[int, float]:
    """Rebuild each game from its action history (OpenSpiel's replay): actions applied, seconds."""
    pyspiel = _load("pyspiel", "open_spiel")
    game = pyspiel.load_game("gin_rummy")
    actions = 0
    began = time.perf_counter()
    for history in histories:
        state = game.new_initial_state()
        for action in history:
            state.apply_action(action)
        actions += len(history)
    return actions, time.perf_counter() - began


def openspiel_hands(hands: Sequence[Sequence[Card]]) -> list[list[int]]:
    """Our hands as OpenSpiel gin-rummy card ids (through its own string parser)."""
    utils = _openspiel_utils()
    return [utils.card_strings_to_card_ints([_openspiel_text(card) for card in hand]) for hand in hands]


def openspiel_min_deadwood(hands: Sequence[Sequence[int]], budget: float, *, cycle: bool = True) -> Solved:
    """`GinRummyUtils.min_deadwood` (C++, through the pybind11 bindings) over `hands`."""
    min_deadwood = _openspiel_utils().min_deadwood
    return solve_all(min_deadwood, hands, budget, cycle=cycle)


def _openspiel_utils() -> Any:
    pyspiel = _load("pyspiel", "open_spiel")
    return pyspiel.gin_rummy.GinRummyUtils(13, 4, 10)  # ranks, suits, hand size: the standard game


def _openspiel_text(card: Card) -> str:
    return card.text[:-1].replace("10", "T") + card.text[-1].lower()


# --- RLCard ---------------------------------------------------------------------------------------


def rlcard_env_playouts(budget: float, seed: int) -> Playouts:
    """Random playouts through RLCard's `gin-rummy` environment: `state['legal_actions']` + `env.step`."""
    rlcard = _load("rlcard", "rlcard")
    env = rlcard.make("gin-rummy", config={"seed": seed})
    rng = random.Random(seed)
    games = decisions = 0
    began = time.perf_counter()
    while time.perf_counter() - began < budget:
        state, _ = env.reset()
        while not env.is_over():
            legal = list(state["legal_actions"])
            state, _ = env.step(legal[rng.randrange(len(legal))])
            decisions += 1
        games += 1
    return Playouts(games, decisions, time.perf_counter() - began)


def rlcard_game_playouts(budget: float, seed: int) -> Playouts:
    """Random playouts of RLCard's bare game loop: `judge.get_legal_actions()` + `game.step`."""
    rlcard = _load("rlcard", "rlcard")
    game = rlcard.make("gin-rummy", config={"seed": seed}).game
    rng = random.Random(seed)
    games = decisions = 0
    began = time.perf_counter()
    while time.perf_counter() - began < budget:
        game.init_game()
        while not game.is_over():
            legal = game.judge.get_legal_actions()
            game.step(legal[rng.randrange(len(legal))])
            decisions += 1
        games += 1
    return Playouts(games, decisions, time.perf_counter() - began)


def rlcard_hands(hands: Sequence[Sequence[Card]]) -> list[list[Any]]:
    """Our hands as RLCard's own card objects (from its deck)."""
    utils = _load("rlcard.games.gin_rummy.utils.utils", "rlcard")
    by_text = {str(card): card for card in utils.get_deck()}
    return [[by_text[card.text[:-1].replace("10", "T") + card.text[-1]] for card in hand] for hand in hands]


def rlcard_deadwood(hands: Sequence[Sequence[Any]], budget: float, *, cycle: bool = True) -> Solved:
    """RLCard's meld utilities as its game uses them: best meld clusters, then their deadwood."""
    melding = _load("rlcard.games.gin_rummy.utils.melding", "rlcard")
    utils = _load("rlcard.games.gin_rummy.utils.utils", "rlcard")

    def deadwood(hand: Sequence[Any]) -> int:
        clusters = melding.get_best_meld_clusters(hand=hand)
        return int(utils.get_deadwood_count(hand=hand, meld_cluster=clusters[0] if clusters else []))

    return solve_all(deadwood, hands, budget, cycle=cycle)


def solve_all(solve: Any, hands: Sequence[Any], budget: float, *, cycle: bool = False) -> Solved:
    """Solve hands in order until they run out (or, with `cycle`, until the budget is spent).

    The clock is read every 256 hands. Only the first pass's values are kept (for agreement checks);
    `Solved.count` counts every hand solved. Cycle only where nothing is cached per hand.
    """
    values: list[int] = []
    count = 0
    began = time.perf_counter()
    while True:
        for start in range(0, len(hands), 256):
            chunk = [solve(hand) for hand in hands[start : start + 256]]
            if count < len(hands):
                values.extend(chunk)
            count += len(chunk)
            if time.perf_counter() - began >= budget:
                return Solved(tuple(values), count, time.perf_counter() - began)
        if not cycle:
            return Solved(tuple(values), count, time.perf_counter() - began)
