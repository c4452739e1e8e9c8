"""A seat's position as rules values, rebuilt from its view (cards, melds, actions: `rummy_contracts.wire`).

Only what a client can see is converted: a view holds the seat's own hand and the public table, so
the position rebuilt here has empty hands for every other seat and no stock or seed.
"""

from __future__ import annotations

from typing import Final

from rummy.game.v1 import game_service_pb2 as gs
from rummy_contracts.wire import card_from_pb, cards_from_pb, meld_from_pb, option_from_pb
from rummy_rules.contract_state import ContractState
from rummy_rules.state import GameState, Phase
from rummy_rules.variants import rules_for, variant_named

_PHASES: Final = {
    gs.PHASE_DRAW: Phase.DRAW,
    gs.PHASE_PLAY: Phase.PLAY,
    gs.PHASE_DEAL_OVER: Phase.DEAL_OVER,
    gs.PHASE_GAME_OVER: Phase.GAME_OVER,
}


def phase(view: gs.PlayerView) -> Phase:
    return _PHASES[view.phase]


def position(view: gs.PlayerView) -> GameState:
    """The seat's position as far as its view shows it (other hands empty, no stock, no seed)."""
    options = {name: option_from_pb(value) for name, value in view.options.items()}
    rules = rules_for(view.variant, len(view.hand_sizes), **options)
    seat = view.seat
    # The spread pile (rummy500) is seen whole; elsewhere only its top card.
    pile = cards_from_pb(view.discard_pile) or (
        (card_from_pb(view.discard_top),) if view.HasField("discard_top") else ()
    )
    return GameState(
        rules=rules,
        seed_commitment=view.seed_commitment,
        deal=view.deal,
        dealer=view.dealer,
        hands=tuple(cards_from_pb(view.hand) if i == seat else () for i in range(len(view.hand_sizes))),
        stock=(),
        discard=pile,
        melds=tuple(meld_from_pb(m.meld) for m in view.melds),
        owners=tuple(m.owner for m in view.melds),
        opened=tuple(view.opened),
        turn=view.turn,
        phase=phase(view),
        taken=card_from_pb(view.taken) if view.HasField("taken") else None,
        turn_start_opened=False,
        extended=False,
        took_unopened=False,
        credits=tuple(tuple(c.seats) for c in view.credits),
        active=tuple(view.active),
        totals=tuple(view.totals),
        penalties=tuple(view.last_penalties),
        deals_done=0,
        reshuffles=0,
        winners=tuple(view.winners),
        payouts=tuple(view.payouts),
        variant_state=_buying(view) if variant_named(view.variant).buys else None,
    )


def _buying(view: gs.PlayerView) -> ContractState:
    """The buys and the buy window the view shows (contract rummy)."""
    return ContractState(
        tuple(view.buys),
        card_from_pb(view.offer) if view.HasField("offer") else None,
        view.offer_from if view.HasField("offer_from") else None,
        view.buy_request if view.HasField("buy_request") else None,
    )
