"""Views as the engine renders them: a seat's view holds its own hand only."""

from __future__ import annotations

import hashlib

from rummy.game.v1 import game_service_pb2 as gs
from rummy_contracts import wire
from rummy_contracts.facts import TableSeated
from rummy_contracts.projection import GameProjection
from rummy_engine.rendering import render, stream_update, view_to_pb
from rummy_engine.streams import Update
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


def test_a_stream_update_is_the_public_view_with_the_seats_own_part() -> None:
    """Built from the public view's bytes (`stream_update`), each seat's message equals the view
    rendered for that seat, deadline included; a spectator's has no seat and no hand."""
    variant = PLAYABLE_VARIANTS[0]
    game = simulate(variant, 3, hashlib.sha256(variant.encode()).digest(), bots.greedy, max_decisions=3000)
    projection = GameProjection()
    state = projection.fold(None, "create", 1, game.events[0])
    seated = TableSeated(("a", "b", "c"), 0, (), "ops", 0, ("A", "B", "C"), (False, True, False))
    state = projection.fold(state, "create", 2, seated)
    for seq, event in enumerate(game.events[1:12], 3):
        state = projection.fold(state, f"c{seq}", seq, event)
    assert state is not None
    update = Update(14, "view", None, False, state)
    for seat in (0, 1, 2, None):
        built = stream_update("g", update, seat, 1234.5)
        expected = render(state, seat, "g", 14, 1234.5)
        assert built.view == expected
        assert built.seq == 14 and built.event_type == "view"
    spectator = stream_update("g", update, None, None).view
    assert not spectator.hand and not spectator.HasField("seat")
    into = gs.StreamGameResponse()
    stream_update("g", update, 2, None, into=into.update)
    assert into.update.view == render(state, 2, "g", 14, None)
