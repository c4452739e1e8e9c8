"""The random-playout checker shared by the property tests of every variant.

One loop plays a whole game or match from a seed and checks, as it goes, legality (legal actions
are accepted, illegal commands refused), observation hiding, JSON round-trips, replay against the
live state and card conservation. What differs per variant family (who chooses the action, who may
act out of turn, which commands are illegal, what a finished result must satisfy) is a `Playout`.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass

import pytest
from rummy_rules.cards import STANDARD_PACK, Card, make_deck
from rummy_rules.commands import BuyDiscard, Command, PassBuy
from rummy_rules.errors import RuleViolation
from rummy_rules.events import Event
from rummy_rules.game import decide, evolve, legal_actions, replay, start
from rummy_rules.serialize import from_dict, to_dict
from rummy_rules.state import GameState, Phase
from rummy_rules.views import observe

MAX_DECISIONS = 30_000  # a guard only: every game must finish (meldstream M1 ends stalled deals)


def all_cards(state: GameState) -> Counter[object]:
    cards: Counter[object] = Counter()
    for hand in state.hands:
        cards.update(hand)
    cards.update(state.stock)
    cards.update(state.discard)
    for meld in state.melds:
        cards.update(meld.cards)
    return cards


def card_not_held(state: GameState, rng: random.Random) -> Card:
    """A card of the standard pack that the seat on turn does not hold, for commands that must fail."""
    held = set(state.hands[state.turn])
    return rng.choice([card for card in STANDARD_PACK if card not in held])


def hidden_shuffled(state: GameState, seat: int, rng: random.Random) -> GameState:
    """The same public position with every card `seat` cannot see dealt differently."""
    others = [i for i in range(len(state.hands)) if i != seat]
    pool = [card for i in others for card in state.hands[i]] + list(state.stock)
    rng.shuffle(pool)
    hands = list(state.hands)
    for i in others:
        hands[i], pool = tuple(pool[: len(hands[i])]), pool[len(hands[i]) :]
    return state._replace(hands=tuple(hands), stock=tuple(pool))


def nobody_out_of_turn(state: GameState) -> Collection[int]:
    """Variants without buying: only the seat on turn ever has a legal action."""
    return ()


@dataclass(frozen=True)
class Playout:
    """How one variant family is played and judged; `play` is the same loop for all of them."""

    choose: Callable[[GameState, int, tuple[Command, ...], random.Random], Command]
    illegal_commands: Callable[[GameState, random.Random], list[Command]]
    check_result: Callable[[GameState, list[Event]], None]
    # seats that may act besides the one on turn (buyers); each is asked once before the turn moves
    out_of_turn: Callable[[GameState], Collection[int]] = nobody_out_of_turn
    own_view_hides_only_in_play: bool = False  # check the actor's own view for hiding in PLAY only
    state_round_trip_every: int = 25  # events between whole-state JSON round-trips (and at the end)

    def play(
        self, variant: str, players: int, seed: bytes, thorough: bool, **options: int | bool | str
    ) -> GameState:
        rng = random.Random(seed)
        first = start(variant, players, seed, **options)
        events: list[Event] = [first]
        state = evolve(None, first)
        replayed = state
        deck = Counter(make_deck(state.rules.packs, state.rules.jokers))
        asked: set[int] = set()
        decisions = 0
        while state.phase is not Phase.GAME_OVER and decisions < MAX_DECISIONS:
            actor = state.turn
            may_act = self.out_of_turn(state)
            waiting = [seat for seat in may_act if seat not in asked]
            if waiting:
                actor = waiting[0]
                asked.add(actor)
            else:
                asked.clear()
            for seat in range(players):
                if seat != state.turn:  # out of turn, only a buy or a pass, and only for those who may
                    others = legal_actions(state, seat)
                    assert all(isinstance(a, BuyDiscard | PassBuy) for a in others)
                    assert bool(others) == (seat in may_act)
            actions = legal_actions(state, actor)
            assert actions, f"no legal action for seat {actor} in {state.phase}"
            action = self.choose(state, actor, actions, rng)
            produced = decide(state, action, seed=seed)
            if thorough:
                self.check_position(
                    state, actor, action=action, actions=actions, decisions=decisions, rng=rng, seed=seed
                )
            for event in produced:
                state = evolve(state, event)
                events.append(event)
                if thorough:
                    wire = json.loads(json.dumps(to_dict(event)))
                    replayed = evolve(replayed, from_dict(wire))
                    assert replayed == state
                    if len(events) % self.state_round_trip_every == 0 or state.phase is Phase.GAME_OVER:
                        assert from_dict(json.loads(json.dumps(to_dict(state)))) == state
                if state.phase in (Phase.DRAW, Phase.PLAY) and (thorough or len(events) % 8 == 0):
                    assert all_cards(state) == deck  # cards are never created or lost
            decisions += 1
        assert replay(events) == state
        assert all_cards(state) == deck
        assert state.phase is Phase.GAME_OVER, f"{variant} stopped at {decisions} decisions"
        assert observe(state, None).seed == seed  # revealed at the end
        self.check_result(state, events)
        return state

    def check_position(
        self,
        state: GameState,
        actor: int,
        *,
        action: Command,
        actions: tuple[Command, ...],
        decisions: int,
        rng: random.Random,
        seed: bytes,
    ) -> None:
        """The thorough checks of one position before `action` is applied."""
        if decisions % 10 == 0:
            for value in (action, observe(state, actor)):
                assert from_dict(json.loads(json.dumps(to_dict(value)))) == value
        for probe in rng.sample(actions, min(3, len(actions))):
            decide(state, probe, seed=seed)  # every legal action is accepted
        for command in self.illegal_commands(state, rng):
            with pytest.raises(RuleViolation):
                decide(state, command, seed=seed)
        for viewer in (actor, None):
            if viewer is None or state.phase is Phase.PLAY or not self.own_view_hides_only_in_play:
                secret = hidden_shuffled(state, actor if viewer is not None else -1, rng)
                assert observe(secret, viewer) == observe(state, viewer)  # observation hides
