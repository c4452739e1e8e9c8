"""What a client is sent: views and stream updates, each built once per event and shared.

An event reaches every open stream of its game. The public part of the view (everything but a seat
and its hand) is the same for all of them, so it is rendered once per event (`Update.cache`) and each
player's message is a copy with the seat's own hand added. The seat that may act also gets its legal
actions in the update, so a client needs no `ListLegalActions` call per move. Views still come only
from `views.observe` (for nobody, then the seat's own hand), so no message carries another seat's cards.
"""

from __future__ import annotations

import contextlib

from rummy.game.v1 import game_service_pb2 as gs
from rummy_client import wire
from rummy_rules.game import legal_actions
from rummy_rules.state import Phase
from rummy_rules.views import observe

from rummy_engine import codec
from rummy_engine.projection import EngineState
from rummy_engine.streams import Update

_ACTING = (Phase.DRAW, Phase.PLAY)


def render(
    state: EngineState, seat: int | None, game_id: str, seq: int, deadline: float | None
) -> gs.PlayerView:
    """The view of `seat` (None: a spectator) with the table's seats and the turn deadline."""
    message = codec.view_to_pb(observe(state.game, seat), game_id, seq)
    message.seats.extend(codec.seats_to_pb(state.table.players, state.timeouts, state.away))
    codec.options_to_pb(message.options, codec.rules_options(state.game.rules))
    if deadline is not None:
        message.turn_deadline.CopyFrom(codec.timestamp(deadline))
    return message


def actions_pb(state: EngineState, seat: int) -> list[gs.Action]:
    """The seat's legal actions as ready-to-send messages (one the API cannot express is left out)."""
    out = []
    for action in legal_actions(state.game, seat):
        with contextlib.suppress(wire.CodecError):
            out.append(wire.command_to_pb(action))
    return out


def stream_update(game_id: str, update: Update, seat: int | None, deadline: float | None) -> gs.GameUpdate:
    """The stream message of `update` for `seat` (None: a spectator)."""
    cache = update.cache
    public = cache.get("view")
    if public is None:
        public = cache["view"] = render(update.state, None, game_id, update.seq, None)
    view = gs.PlayerView()
    view.CopyFrom(public)
    if seat is not None:
        view.seat = seat
        view.hand.extend(wire.cards_to_pb(update.game.hands[seat]))
    if deadline is not None:
        view.turn_deadline.CopyFrom(codec.timestamp(deadline))
    message = gs.GameUpdate(seq=update.seq, event_type=update.event_type, by_timer=update.by_timer, view=view)
    if update.actor is not None:
        message.actor = update.actor
    if seat is not None:
        actions = cache.get(seat)
        if actions is None:
            game = update.game
            # Out of turn only a contract buy (or pass) can be open to a seat: nothing to list.
            acting = game.phase in _ACTING and (game.turn == seat or game.offer is not None)
            actions = cache[seat] = actions_pb(update.state, seat) if acting else []
        message.legal_actions.extend(actions)
    return message
