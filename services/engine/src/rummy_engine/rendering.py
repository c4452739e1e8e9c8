"""What a client is sent: views and stream updates, each built once per event and shared.

An event reaches every open stream of its game. The public part of the view (everything but a seat
and its hand) is the same for all of them, so it is rendered and serialized once per event
(`Update.cache`) and each player's message is those bytes with the seat's own hand appended. The seat
that may act also gets its legal actions in the update, so a client needs no `ListLegalActions` call
per move. Views still come only from `views.observe` (for nobody, then the seat's own hand), so no
message carries another seat's cards.
Views are mapped to messages field by field here (a view adds the table's seats and timers): only the
engine renders them. What clients and the other services read too is in `rummy_contracts`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from typing import Final

from google.protobuf.timestamp_pb2 import Timestamp
from rummy.game.v1 import game_service_pb2 as gs
from rummy_contracts import wire
from rummy_contracts.projection import EngineState
from rummy_rules.events import OptionValue
from rummy_rules.game import legal_actions
from rummy_rules.out_of_turn import may_act
from rummy_rules.state import GameState, Phase
from rummy_rules.variants import Rules
from rummy_rules.views import PlayerView, observe

from rummy_engine.presence import seat_presence
from rummy_engine.streams import Update

_PHASE_TO_PB: Final = {
    Phase.DRAW: gs.PHASE_DRAW,
    Phase.PLAY: gs.PHASE_PLAY,
    Phase.DEAL_OVER: gs.PHASE_DEAL_OVER,
    Phase.GAME_OVER: gs.PHASE_GAME_OVER,
}


def render(
    state: EngineState, seat: int | None, game_id: str, seq: int, deadline: float | None
) -> gs.PlayerView:
    """The view of `seat` (None: a spectator) with the table's seats and the turn deadline."""
    message = view_to_pb(observe(state.game, seat), game_id, seq)
    message.seats.extend(seats_to_pb(state))
    wire.options_to_pb(message.options, rules_options(state.game.rules))
    if deadline is not None:
        message.turn_deadline.CopyFrom(timestamp(deadline))
    return message


def actions_pb(state: EngineState, seat: int) -> list[gs.Action]:
    """The seat's legal actions as ready-to-send messages (one the API cannot express is left out)."""
    out = []
    for action in legal_actions(state.game, seat):
        with contextlib.suppress(wire.CodecError):
            out.append(wire.command_to_pb(action))
    return out


def stream_update(
    game_id: str,
    update: Update,
    seat: int | None,
    deadline: float | None,
    into: gs.GameUpdate | None = None,
) -> gs.GameUpdate:
    """The stream message of `update` for `seat` (None: a spectator), built in `into` when given (the
    `update` field of a stream's response, so the message is not copied into it).

    The public view is serialized once per event (`Update.cache`); a seat's view is those bytes with
    its seat and hand appended, parsed once: protobuf merges concatenated messages, and the public
    view has neither. That costs one parse in C per stream instead of copies made field by field.
    """
    cache = update.cache
    public = cache.get("view")
    if public is None:
        public = cache["view"] = render(update.state, None, game_id, update.seq, None).SerializeToString()
    message = gs.GameUpdate() if into is None else into
    message.seq, message.event_type, message.by_timer = update.seq, update.event_type, update.by_timer
    if seat is None:
        message.view.MergeFromString(public)
    else:
        own = gs.PlayerView(seat=seat, hand=wire.cards_to_pb(update.game.hands[seat]))
        message.view.MergeFromString(public + own.SerializeToString())
    if deadline is not None:
        message.view.turn_deadline.CopyFrom(timestamp(deadline))
    if update.actor is not None:
        message.actor = update.actor
    if seat is not None:
        actions = cache.get(seat)
        if actions is None:
            # A seat that may not act now has nothing to list (rules `may_act`).
            acting = update.settled and may_act(update.game, seat)
            actions = cache[seat] = actions_pb(update.state, seat) if acting else []
        message.legal_actions.extend(actions)
    return message


# --- views -----------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)  # every view carries them; `asdict` is slow and rules are immutable
def rules_options(rules: Rules) -> tuple[tuple[str, OptionValue], ...]:
    """Every option value of a game's rules (defaults included), so a client can rebuild its rules."""
    values = dataclasses.asdict(rules.options)
    return tuple((name, value) for name, value in sorted(values.items()) if value is not None)


def view_to_pb(view: PlayerView, game_id: str, seq: int) -> gs.PlayerView:
    """A rules view as sent to a client; it holds nothing `views.observe` did not put in it."""
    message = gs.PlayerView(
        game_id=game_id,
        seq=seq,
        variant=view.variant,
        hand=wire.cards_to_pb(view.hand or ()),
        hand_sizes=view.hand_sizes,
        opened=view.opened,
        melds=[gs.TableMeld(index=m.index, owner=m.owner, meld=wire.meld_to_pb(m.meld)) for m in view.melds],
        discard_size=view.discard_size,
        stock_size=view.stock_size,
        turn=view.turn,
        phase=_PHASE_TO_PB[view.phase],
        dealer=view.dealer,
        deal=view.deal,
        active=view.active,
        totals=view.totals,
        last_penalties=view.last_penalties,
        winners=view.winners,
        payouts=view.payouts,
        seed_commitment=view.seed_commitment,
        seed=view.seed or b"",
    )
    if view.seat is not None:
        message.seat = view.seat
    if view.discard_top is not None:
        message.discard_top.CopyFrom(wire.card_to_pb(view.discard_top))
    if view.taken is not None:
        message.taken.CopyFrom(wire.card_to_pb(view.taken))
    message.discard_pile.extend(wire.cards_to_pb(view.discard_pile))  # rummy500 only: its pile is spread
    message.credits.extend(gs.MeldCredits(seats=seats) for seats in view.credits)
    message.buys.extend(view.buys)
    if view.offer is not None:
        message.offer.CopyFrom(wire.card_to_pb(view.offer))
    if view.offer_from is not None:
        message.offer_from = view.offer_from
    if view.buy_request is not None:
        message.buy_request = view.buy_request
    return message


def hands_to_pb(state: GameState) -> list[gs.Hand]:
    """Every hand: only for histories of ended games (the caller checks)."""
    return [gs.Hand(seat=seat, cards=wire.cards_to_pb(hand)) for seat, hand in enumerate(state.hands)]


def timestamp(seconds: float) -> Timestamp:
    stamp = Timestamp()
    stamp.FromNanoseconds(int(seconds * 1e9))
    return stamp


def seats_to_pb(state: EngineState) -> list[gs.SeatInfo]:
    """The table's seats with their timeouts, presence and time bank left (`presence.seat_presence`)."""
    table = state.table
    out = []
    for seat, player in enumerate(table.players):
        where, grace_ends_ms, bank_left, turns = seat_presence(state, seat)
        info = gs.SeatInfo(
            seat=seat,
            player_id=player,
            timeouts=state.timeouts[seat],
            away=state.away[seat],
            name=table.name(seat),
            bot=table.bot(seat),
            presence=where,
            bank_left_ms=bank_left,
            turns_before_forfeit=turns,
        )
        if grace_ends_ms:
            info.grace_ends_at.CopyFrom(timestamp(grace_ends_ms / 1000))
        out.append(info)
    return out
