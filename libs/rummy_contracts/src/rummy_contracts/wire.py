"""The wire format of cards, melds, options and actions: rules values <-> protobuf, for both sides.

One codec for the engine (which decodes clients' actions strictly and lists legal actions as messages),
for Python clients and bots (which weigh the engine's legal actions as rules commands), and for
matchmaking and scoring (table options): a client must produce exactly what the engine parses. An
action whose fields are cards and numbers is mapped by name and field type, like events (a new one
needs its message in the protos and no code here); those with nested melds and layoffs by hand. Events
are in `event_format`; views, which only the engine renders, in `rummy_engine.rendering`. Malformed
input raises `CodecError`.
"""

from __future__ import annotations

import functools
import re
import types
import typing
from collections.abc import Iterable, Sequence
from typing import Any, Final

from google.protobuf.message import Message
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


# --- fields by name and type: events, and actions with no shape of their own ----------------------


def case_name(name: str) -> str:
    """The oneof case (and message field) name of a rules class: `CardDrawn` -> `card_drawn`."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


_HINTS: Final[dict[type[Any], dict[str, Any]]] = {}


def type_hints(cls: type[Any]) -> dict[str, Any]:
    """A dataclass's field types, resolved once (a fixed set of classes: the rules' and the facts')."""
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls)
    return hints


def encode_field(target: Message, name: str, hint: Any, value: Any) -> None:
    """Set field `name` of `target` from a rules value (a card, meld, option set, tuple or scalar)."""
    if value is None:
        return
    if name == "options":
        options_to_pb(getattr(target, name), value)
    elif isinstance(value, Card):
        getattr(target, name).CopyFrom(card_to_pb(value))
    elif isinstance(value, Meld):
        getattr(target, name).CopyFrom(meld_to_pb(value))
    elif isinstance(value, tuple):
        items = [
            card_to_pb(v) if isinstance(v, Card) else meld_to_pb(v) if isinstance(v, Meld) else v
            for v in value
        ]
        getattr(target, name).extend(items)
    else:
        setattr(target, name, value)


def decode_field(message: Message, name: str, hint: Any) -> Any:
    """The rules value of field `name` of `message`, typed as `hint` says."""
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        inner = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        if len(inner) == 1:
            if not message.HasField(name):
                return None
            return decode_field(message, name, inner[0])
    if name == "options":
        return tuple(sorted((key, option_from_pb(value)) for key, value in getattr(message, name).items()))
    if hint is Card:
        return card_from_pb(getattr(message, name))
    if hint is Meld:
        return meld_from_pb(getattr(message, name))
    if origin is tuple:
        (item,) = {arg for arg in typing.get_args(hint) if arg is not Ellipsis}
        values = getattr(message, name)
        if item is Card:
            return cards_from_pb(values)
        if item is Meld:
            return tuple(meld_from_pb(v) for v in values)
        return tuple(values)
    value = getattr(message, name)
    if hint is int and not isinstance(value, int):
        raise CodecError(f"{name}: expected an integer")
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


_COMMANDS: Final[dict[str, type[Any]]] = {
    case_name(cls.__name__): cls for cls in typing.get_args(commands.Command)
}
"""`Action.kind` case name -> rules command class: every command has the case of its own name."""


class _ByName:
    """The codec of a command whose message holds its fields (all but the seat) by name and type: a
    new action of that shape needs its message in the protos and nothing here. Built once per command
    class, as legal-action lists encode a dozen commands for every view."""

    def __init__(self, cls: type[Any]) -> None:
        self.cls = cls
        self.kind = case_name(cls.__name__)
        field = gs.Action.DESCRIPTOR.fields_by_name.get(self.kind)
        if field is None or field.message_type is None:
            raise CodecError(f"the API has no action message for {cls.__name__} yet")
        self.message: Any = getattr(gs, field.message_type.name)
        self.fields = [(name, hint) for name, hint in type_hints(cls).items() if name != "seat"]
        on_wire = field.message_type.fields_by_name
        for name, _ in self.fields:
            if name not in on_wire:
                raise CodecError(f"{self.kind}: the protos carry no {name}")
        self.required = [
            name
            for name, hint in self.fields
            if on_wire[name].message_type is not None
            and not on_wire[name].is_repeated
            and type(None) not in typing.get_args(hint)
        ]

    def encode(self, command: commands.Command) -> gs.Action:
        body = self.message()
        for name, hint in self.fields:
            encode_field(body, name, hint, getattr(command, name))
        return gs.Action(**{self.kind: body})

    def decode(self, seat: int, message: Message) -> commands.Command:
        for name in self.required:
            if not message.HasField(name):
                raise CodecError(f"{self.kind} needs {'a ' + name if name == 'card' else name}")
        values = {name: decode_field(message, name, hint) for name, hint in self.fields}
        command: commands.Command = self.cls(seat, **values)
        return command


_BY_NAME: Final[dict[type[Any], _ByName]] = {}


def _by_name(cls: type[Any]) -> _ByName:
    codec = _BY_NAME.get(cls)
    if codec is None:
        codec = _BY_NAME[cls] = _ByName(cls)
    return codec


def command_from_pb(seat: int, action: gs.Action) -> commands.Command:
    """The rules command for `seat`; CodecError when the action is empty or malformed."""
    kind = action.WhichOneof("kind")
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
    if kind == "pick_from_pile":
        pick = action.pick_from_pile
        return commands.PickFromPile(seat, pick.index, _then_from_pb(seat, pick))
    if kind == "go_out":
        out = action.go_out
        melds = tuple(cards_from_pb(meld.cards) for meld in out.melds)
        kinds = tuple(_KIND_FROM_PB.get(meld.kind) for meld in out.melds)
        layoffs = tuple(_lay_off_from_pb(seat, layoff) for layoff in out.layoffs)
        discard = card_from_pb(out.discard) if out.HasField("discard") else None
        return commands.GoOut(seat, melds, kinds, layoffs, discard)
    if kind is None:
        raise CodecError("the action is empty: set exactly one kind")
    cls = _COMMANDS.get(kind)
    if cls is None:
        raise CodecError(f"no rules command for action {kind!r}")
    return _by_name(cls).decode(seat, getattr(action, kind))


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
    if not isinstance(command, commands.GoOut):
        return _by_name(type(command)).encode(command)
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
