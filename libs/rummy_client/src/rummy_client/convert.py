"""What a Python bot needs from the wire: cards, melds, legal actions and the seat's position as rules values.

Only what a client can see is converted: a view holds the seat's own hand and the public table, so
the position rebuilt here has empty hands for every other seat and no stock or seed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from rummy.game.v1 import events_pb2 as ev
from rummy.game.v1 import game_service_pb2 as gs
from rummy_rules import commands
from rummy_rules.cards import Card, Suit
from rummy_rules.melds import End, Meld, MeldKind
from rummy_rules.state import GameState, Phase
from rummy_rules.variants import rules_for

_SUITS: Final = {
    ev.SUIT_UNSPECIFIED: None,
    ev.SUIT_CLUBS: Suit.CLUBS,
    ev.SUIT_DIAMONDS: Suit.DIAMONDS,
    ev.SUIT_HEARTS: Suit.HEARTS,
    ev.SUIT_SPADES: Suit.SPADES,
}
_KINDS: Final = {ev.MELD_KIND_SET: MeldKind.SET, ev.MELD_KIND_RUN: MeldKind.RUN}
_ENDS: Final = {gs.RUN_END_LOW: End.LOW, gs.RUN_END_HIGH: End.HIGH}
_PHASES: Final = {
    gs.PHASE_DRAW: Phase.DRAW,
    gs.PHASE_PLAY: Phase.PLAY,
    gs.PHASE_DEAL_OVER: Phase.DEAL_OVER,
    gs.PHASE_GAME_OVER: Phase.GAME_OVER,
}


def card(message: ev.Card) -> Card:
    return Card(message.rank, _SUITS[message.suit])


def cards(messages: Iterable[ev.Card]) -> tuple[Card, ...]:
    return tuple(card(m) for m in messages)


def meld(message: ev.Meld) -> Meld:
    return Meld(_KINDS[message.kind], cards(message.cards), message.rank, _SUITS[message.suit])


def phase(view: gs.PlayerView) -> Phase:
    return _PHASES[view.phase]


def _lay_off(seat: int, message: gs.LayOff) -> commands.LayOff:
    return commands.LayOff(seat, message.meld, cards(message.cards), _ENDS.get(message.at))


def _melds(seat: int, melds: Iterable[gs.MeldCards]) -> commands.LayMelds:
    items = list(melds)
    return commands.LayMelds(
        seat, tuple(cards(m.cards) for m in items), tuple(_KINDS.get(m.kind) for m in items)
    )


def _then(seat: int, message: gs.SwapJoker | gs.PickFromPile) -> commands.LayMelds | commands.LayOff | None:
    if message.HasField("lay_melds"):
        return _melds(seat, message.lay_melds.melds)
    if message.HasField("lay_off"):
        return _lay_off(seat, message.lay_off)
    return None


def command(seat: int, action: gs.Action) -> commands.Command:
    """The rules command an action message stands for (for a bot to weigh the engine's legal actions)."""
    kind = action.WhichOneof("kind")
    if kind == "draw_from_stock":
        return commands.DrawFromStock(seat)
    if kind == "take_discard":
        return commands.TakeDiscard(seat)
    if kind == "lay_melds":
        return _melds(seat, action.lay_melds.melds)
    if kind == "lay_off":
        return _lay_off(seat, action.lay_off)
    if kind == "swap_joker":
        swap = action.swap_joker
        return commands.SwapJoker(seat, swap.meld, cards(swap.cards), _then(seat, swap))
    if kind == "pick_from_pile":
        pick = action.pick_from_pile
        return commands.PickFromPile(seat, pick.index, _then(seat, pick))
    if kind == "buy_discard":
        return commands.BuyDiscard(seat)
    if kind == "pass_buy":
        return commands.PassBuy(seat)
    if kind == "discard":
        return commands.Discard(seat, card(action.discard.card))
    out = action.go_out
    discard = card(out.discard) if out.HasField("discard") else None
    return commands.GoOut(
        seat,
        tuple(cards(m.cards) for m in out.melds),
        tuple(_KINDS.get(m.kind) for m in out.melds),
        tuple(_lay_off(seat, layoff) for layoff in out.layoffs),
        discard,
    )


def position(view: gs.PlayerView) -> GameState:
    """The seat's position as far as its view shows it (other hands empty, no stock, no seed)."""
    options = {
        name: getattr(value, value.WhichOneof("value") or "int_value") for name, value in view.options.items()
    }
    rules = rules_for(view.variant, len(view.hand_sizes), **options)
    seat = view.seat
    # The spread pile (rummy500) is seen whole; elsewhere only its top card.
    pile = cards(view.discard_pile) or ((card(view.discard_top),) if view.HasField("discard_top") else ())
    return GameState(
        rules=rules,
        seed_commitment=view.seed_commitment,
        deal=view.deal,
        dealer=view.dealer,
        hands=tuple(cards(view.hand) if i == seat else () for i in range(len(view.hand_sizes))),
        stock=(),
        discard=pile,
        melds=tuple(meld(m.meld) for m in view.melds),
        owners=tuple(m.owner for m in view.melds),
        opened=tuple(view.opened),
        turn=view.turn,
        phase=phase(view),
        taken=card(view.taken) if view.HasField("taken") else None,
        turn_start_opened=False,
        extended=False,
        took_unopened=False,
        credits=tuple(tuple(c.seats) for c in view.credits),
        buys=tuple(view.buys),
        offer=card(view.offer) if view.HasField("offer") else None,
        offer_from=view.offer_from if view.HasField("offer_from") else None,
        buy_request=view.buy_request if view.HasField("buy_request") else None,
        active=tuple(view.active),
        totals=tuple(view.totals),
        penalties=tuple(view.last_penalties),
        deals_done=0,
        reshuffles=0,
        winners=tuple(view.winners),
        payouts=tuple(view.payouts),
    )
