"""The wire format of cards, melds, options and actions: rules values <-> protobuf, for both sides.

One codec for the engine (which decodes clients' actions strictly and lists legal actions as messages),
for Python clients and bots (which weigh the engine's legal actions as rules commands), and for
matchmaking and scoring (table options): a client must produce exactly what the engine parses. Events
are in `event_format`; views, which only the engine renders, in `rummy_engine.rendering`. Malformed
input raises `CodecError`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Any, Final

from rummy.game.v1 import events_pb2 as ev
from rummy.game.v1 import game_service_pb2 as gs
from rummy_rules import commands
from rummy_rules.cards import Card, CardError, Suit
from rummy_rules.events import OptionValue
from rummy_rules.melds import End, Meld, MeldKind
from rummy_rules.out_of_turn import OUT_OF_TURN


class CodecError(ValueError):
    """A message that does not describe a valid value (a card that does not exist, a missing field)."""


# --- cards and melds ------------------------------------------------------------------------------

_SUIT_TO_PB: Final = {
    None: ev.SUIT_UNSPECIFIED,
    Suit.CLUBS: ev.SUIT_CLUBS,
    Suit.DIAMONDS: ev.SUIT_DIAMONDS,
    Suit.HEARTS: ev.SUIT_HEARTS,
    Suit.SPADES: ev.SUIT_SPADES,
}
_SUIT_FROM_PB: Final = {value: suit for suit, value in _SUIT_TO_PB.items()}
_KIND_TO_PB: Final = {MeldKind.SET: ev.MELD_KIND_SET, MeldKind.RUN: ev.MELD_KIND_RUN}
_KIND_FROM_PB: Final = {value: kind for kind, value in _KIND_TO_PB.items()}


@functools.cache  # a few dozen cards; views list hundreds a second (callers copy, never mutate)
def card_to_pb(card: Card) -> ev.Card:
    return ev.Card(rank=card.rank, suit=_SUIT_TO_PB[card.suit])


def card_from_pb(message: ev.Card) -> Card:
    suit = _SUIT_FROM_PB.get(message.suit, "bad")
    if suit == "bad":
        raise CodecError(f"unknown suit {message.suit}")
    try:
        return Card(message.rank, suit)  # type: ignore[arg-type]
    except CardError as exc:
        raise CodecError(str(exc)) from None


def cards_to_pb(cards: Iterable[Card]) -> list[ev.Card]:
    return [card_to_pb(card) for card in cards]


def cards_from_pb(messages: Iterable[ev.Card]) -> tuple[Card, ...]:
    return tuple(card_from_pb(message) for message in messages)


@functools.lru_cache(maxsize=4096)  # a table's melds reappear in every view until they change
def meld_to_pb(meld: Meld) -> ev.Meld:
    return ev.Meld(
        kind=_KIND_TO_PB[meld.kind],
        cards=cards_to_pb(meld.cards),
        rank=meld.rank,
        suit=_SUIT_TO_PB[meld.suit],
    )


def meld_from_pb(message: ev.Meld) -> Meld:
    kind = _KIND_FROM_PB.get(message.kind)
    if kind is None:
        raise CodecError("a meld needs a kind")
    return Meld(kind, cards_from_pb(message.cards), message.rank, _SUIT_FROM_PB.get(message.suit))


# --- options -------------------------------------------------------------------------------------


def option_to_pb(value: OptionValue) -> ev.OptionValue:
    """A rules option value (None: unset) as the `OptionValue` oneof."""
    if isinstance(value, bool):  # before int: a bool is an int
        return ev.OptionValue(bool_value=value)
    if isinstance(value, int):
        return ev.OptionValue(int_value=value)
    if isinstance(value, str):
        return ev.OptionValue(string_value=value)
    return ev.OptionValue()


def options_to_pb(target: Any, options: Iterable[tuple[str, OptionValue]]) -> None:
    """Fill a protobuf map of options (`target`: an event's, a view's or a table's `options`)."""
    for name, value in options:
        target[name].CopyFrom(option_to_pb(value))


def option_from_pb(message: ev.OptionValue) -> OptionValue:
    """The value an `OptionValue` holds; None when it holds none."""
    which = message.WhichOneof("value")
    if which is None:
        return None
    value: OptionValue = getattr(message, which)
    return value


# --- actions ---------------------------------------------------------------------------------------

_END_FROM_PB: Final = {gs.RUN_END_UNSPECIFIED: None, gs.RUN_END_LOW: End.LOW, gs.RUN_END_HIGH: End.HIGH}
_END_TO_PB: Final = {end: value for value, end in _END_FROM_PB.items()}


def _melds_from_pb(
    melds: Sequence[gs.MeldCards],
) -> tuple[tuple[tuple[Card, ...], ...], tuple[MeldKind | None, ...]]:
    if not melds:
        raise CodecError("at least one meld is needed")
    cards = tuple(cards_from_pb(meld.cards) for meld in melds)
    kinds = tuple(_KIND_FROM_PB.get(meld.kind) for meld in melds)
    return cards, kinds


def _lay_off_from_pb(seat: int, message: gs.LayOff) -> commands.LayOff:
    if not message.cards:
        raise CodecError("a layoff needs cards")
    at = _END_FROM_PB.get(message.at, "bad")
    if at == "bad":
        raise CodecError(f"unknown run end {message.at}")
    return commands.LayOff(seat, message.meld, cards_from_pb(message.cards), at)  # type: ignore[arg-type]


def _then_from_pb(
    seat: int, message: gs.SwapJoker | gs.PickFromPile
) -> commands.LayMelds | commands.LayOff | None:
    """The meld or layoff that uses a freed joker or a picked card, if the message carries one."""
    which = message.WhichOneof("then")
    if which == "lay_melds":
        melds, kinds = _melds_from_pb(message.lay_melds.melds)
        return commands.LayMelds(seat, melds, kinds)
    if which == "lay_off":
        return _lay_off_from_pb(seat, message.lay_off)
    return None


def command_from_pb(seat: int, action: gs.Action) -> commands.Command:
    """The rules command for `seat`; CodecError when the action is empty or malformed."""
    kind = action.WhichOneof("kind")
    if kind == "draw_from_stock":
        return commands.DrawFromStock(seat)
    if kind == "take_discard":
        return commands.TakeDiscard(seat)
    if kind == "lay_melds":
        melds, kinds = _melds_from_pb(action.lay_melds.melds)
        return commands.LayMelds(seat, melds, kinds)
    if kind == "lay_off":
        return _lay_off_from_pb(seat, action.lay_off)
    if kind == "swap_joker":
        swap = action.swap_joker
        if not swap.cards:
            raise CodecError("a joker swap needs the card(s) given for the joker")
        return commands.SwapJoker(seat, swap.meld, cards_from_pb(swap.cards), _then_from_pb(seat, swap))
    if kind == "discard":
        if not action.discard.HasField("card"):
            raise CodecError("a discard needs a card")
        return commands.Discard(seat, card_from_pb(action.discard.card))
    if kind == "pick_from_pile":
        pick = action.pick_from_pile
        return commands.PickFromPile(seat, pick.index, _then_from_pb(seat, pick))
    if kind == "buy_discard":
        return commands.BuyDiscard(seat)
    if kind == "pass_buy":
        return commands.PassBuy(seat)
    if kind == "go_out":
        out = action.go_out
        melds = tuple(cards_from_pb(meld.cards) for meld in out.melds)
        kinds = tuple(_KIND_FROM_PB.get(meld.kind) for meld in out.melds)
        layoffs = tuple(_lay_off_from_pb(seat, layoff) for layoff in out.layoffs)
        discard = card_from_pb(out.discard) if out.HasField("discard") else None
        return commands.GoOut(seat, melds, kinds, layoffs, discard)
    raise CodecError("the action is empty: set exactly one kind")


def _meld_cards_to_pb(
    melds: Sequence[Sequence[Card]], kinds: Sequence[MeldKind | None]
) -> list[gs.MeldCards]:
    out = []
    for index, cards in enumerate(melds):
        kind = kinds[index] if index < len(kinds) else None
        pb_kind = ev.MELD_KIND_UNSPECIFIED if kind is None else _KIND_TO_PB[kind]
        out.append(gs.MeldCards(cards=cards_to_pb(cards), kind=pb_kind))
    return out


def _lay_off_to_pb(command: commands.LayOff) -> gs.LayOff:
    return gs.LayOff(meld=command.meld, cards=cards_to_pb(command.cards), at=_END_TO_PB[command.at])


def _then_to_pb(
    target: gs.SwapJoker | gs.PickFromPile, then: commands.LayMelds | commands.LayOff | None
) -> None:
    if isinstance(then, commands.LayMelds):
        target.lay_melds.CopyFrom(gs.LayMelds(melds=_meld_cards_to_pb(then.melds, then.kinds)))
    elif isinstance(then, commands.LayOff):
        target.lay_off.CopyFrom(_lay_off_to_pb(then))


def command_to_pb(command: commands.Command) -> gs.Action:
    """The action message a client sends for `command` (used for legal-action lists and by bots)."""
    if isinstance(command, commands.DrawFromStock):
        return gs.Action(draw_from_stock=gs.DrawFromStock())
    if isinstance(command, commands.TakeDiscard):
        return gs.Action(take_discard=gs.TakeDiscard())
    if isinstance(command, commands.LayMelds):
        return gs.Action(lay_melds=gs.LayMelds(melds=_meld_cards_to_pb(command.melds, command.kinds)))
    if isinstance(command, commands.LayOff):
        return gs.Action(lay_off=_lay_off_to_pb(command))
    if isinstance(command, commands.SwapJoker):
        swap = gs.SwapJoker(meld=command.meld, cards=cards_to_pb(command.cards))
        _then_to_pb(swap, command.then)
        return gs.Action(swap_joker=swap)
    if isinstance(command, commands.PickFromPile):
        pick = gs.PickFromPile(index=command.index)
        _then_to_pb(pick, command.then)
        return gs.Action(pick_from_pile=pick)
    if isinstance(command, commands.BuyDiscard):
        return gs.Action(buy_discard=gs.BuyDiscard())
    if isinstance(command, commands.PassBuy):
        return gs.Action(pass_buy=gs.PassBuy())
    if isinstance(command, commands.Discard):
        return gs.Action(discard=gs.Discard(card=card_to_pb(command.card)))
    if not isinstance(command, commands.GoOut):
        raise CodecError(f"the API has no action message for {type(command).__name__} yet")
    out = gs.GoOut(
        melds=_meld_cards_to_pb(command.melds, command.kinds),
        layoffs=[_lay_off_to_pb(layoff) for layoff in command.layoffs],
    )
    if command.discard is not None:
        out.discard.CopyFrom(card_to_pb(command.discard))
    return gs.Action(go_out=out)


OUT_OF_TURN_KINDS: Final = frozenset(
    str(command_to_pb(command(0)).WhichOneof("kind")) for command in OUT_OF_TURN
)
"""The action kinds (`Action.kind` names) a seat may send when it is not the seat to move: the rules'
`OUT_OF_TURN`, named as on the wire, for clients that tell a turn's moves from an answer to an offer."""
