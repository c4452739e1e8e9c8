"""Views as the engine renders them: a seat's view holds its own hand only."""

from __future__ import annotations

import hashlib

from rummy_contracts import wire
from rummy_engine.rendering import view_to_pb
from rummy_rules import bots
from rummy_rules.game import evolve
from rummy_rules.simulate import simulate
from rummy_rules.variants import PLAYABLE_VARIANTS
from rummy_rules.views import observe


def test_a_view_holds_only_the_seats_own_hand() -> None:
    variant = PLAYABLE_VARIANTS[0]
    game = simulate(variant, 3, hashlib.sha256(variant.encode()).digest(), bots.greedy, max_decisions=3000)
    state = None
    for event in game.events[:10]:
        state = evolve(state, event)
    assert state is not None
    for seat in range(3):
        message = view_to_pb(observe(state, seat), "g", 10)
        assert wire.cards_from_pb(message.hand) == state.hands[seat]
        assert message.seed == b""
    spectator = view_to_pb(observe(state, None), "g", 10)
    assert not spectator.hand and not spectator.HasField("seat")
