"""How a legal action reads to a person ("Draw from stock", "Discard 7♥", "Lay off 5♣ on meld 2"), for
every client from one table: `action_labels.json` beside this module says, for each kind of the proto's
Action oneof, which catalogue message names it and how its placeholders are made from the action. The
terminal renders it here; the gateway serves the same table to the page with the catalogue
(`meldstream_web.messages`), whose static/labels.js renders it the same way.

A new action needs no code here or in a client: without a row it reads as the catalogue message
`move.<kind>` (no placeholders) and sorts after the kinds the table orders; a row is needed only when
its words show a card, a meld or a number, and is made of the forms this module (and labels.js) know.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final

from google.protobuf.message import Message
from rummy.game.v1 import events_pb2 as ev
from rummy.game.v1 import game_service_pb2 as gs

from rummy_contracts.catalogue import Words

Form = Mapping[str, Any]

RANKS: Final = ("JK", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS: Final = {ev.SUIT_CLUBS: "♣", ev.SUIT_DIAMONDS: "♦", ev.SUIT_HEARTS: "♥", ev.SUIT_SPADES: "♠"}
KINDS: Final = tuple(field.name for field in gs.Action.DESCRIPTOR.oneofs_by_name["kind"].fields)
"""The kinds of action, in the proto's order: the Action oneof's field names."""


@functools.cache
def table() -> dict[str, Any]:
    """The table as stored (what the gateway serves the page beside the catalogue)."""
    text = resources.files(__package__).joinpath("action_labels.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def row(kind: str) -> dict[str, Any]:
    """How `kind` reads: its message id and placeholder forms (the default row without a table row)."""
    found: dict[str, Any] = table()["labels"].get(kind, {})
    return {"id": found.get("id", f"move.{kind}"), "args": found.get("args", {})}


def order(kind: str) -> int:
    """Where `kind` is listed among moves: the table's order, any other kind after them."""
    listed: list[str] = table()["order"]
    return listed.index(kind) if kind in listed else len(listed)


def menu_order(actions: Iterable[gs.Action]) -> list[gs.Action]:
    """Actions in the order every client lists them (stable for kinds the table does not order)."""
    return sorted(actions, key=lambda action: order(str(action.WhichOneof("kind"))))


@dataclass(frozen=True, slots=True)
class Voice:
    """What a client makes of the words: a message filled, a plural form filled, a card shown (the
    terminal escapes the catalogue's text for its markup and colours the cards)."""

    say: Callable[[str, Mapping[str, object]], str]
    count: Callable[[str, int, Mapping[str, object]], str]
    card: Callable[[ev.Card], str]


def plain(words: Words) -> Voice:
    """Plain text in `words`' language, cards as the page writes them (`7♥`, `JK`)."""
    return Voice(
        say=lambda key, params: words(key, **params),
        count=lambda key, number, params: words.count(key, number, **params),
        card=card_text,
    )


def card_text(card: ev.Card) -> str:
    """A card as the page's buttons write it: `7♥`, `10♠`, `JK` (cards.js `cardText`)."""
    return RANKS[card.rank] + SUITS.get(card.suit, "?") if card.rank else "JK"


def label(action: gs.Action, view: gs.PlayerView, voice: Voice) -> str:
    """How `action` reads to the seat whose `view` offered it."""
    kind = action.WhichOneof("kind")
    if kind is None:
        return ""
    return _Render(view, voice).message(row(kind), getattr(action, kind))


class _Render:
    def __init__(self, view: gs.PlayerView, voice: Voice) -> None:
        self.view, self.voice = view, voice
        self.shared: dict[str, Any] = table()["shared"]

    def message(self, form: Form, body: Message) -> str:
        if "at" in form:
            at = self.at(body, form["at"])
            if not isinstance(at, Message):
                return ""
            body = at
        if "when" in form and not _present(self.at(body, form["when"])):
            return ""
        args = form.get("args", {})
        if isinstance(args.get("use"), str):
            args = self.shared[args["use"]]
        return self.voice.say(form["id"], {name: self.value(value, body) for name, value in args.items()})

    def value(self, form: Form, body: Message) -> str:
        if "use" in form:
            return self.value(self.shared[form["use"]], body)
        if "card" in form:
            return self.voice.card(_card(self.at(body, form["card"])))
        if "cards" in form:
            return self._cards(self.at(body, form["cards"]))
        if "melds" in form:
            melds = self.at(body, form["melds"]) or []
            return " | ".join(self._cards(meld.cards) for meld in melds)
        if "position" in form:
            return str((self.at(body, form["position"]) or 0) + 1)
        if "choose" in form:
            return self._choose(form, body)
        if "plural" in form:
            items = self.at(body, form["in"]) or []
            after = len(items) - (self.at(body, form["after"]) or 0) - 1
            return self.voice.count(form["plural"], after, {}) if after > 0 else ""
        if "first" in form:
            return next((text for part in form["first"] if (text := self.value(part, body))), "")
        if "join" in form:
            parts = [text for part in form["join"] for text in self._each(part, body) if text]
            return self.voice.say("list.separator", {}).join(parts)
        return self.message(form, body)

    def _each(self, form: Form, body: Message) -> list[str]:
        if "each" not in form:
            return [self.value(form, body)]
        return [self.message(form, item) for item in self.at(body, form["each"]) or []]

    def _cards(self, cards: Iterable[ev.Card] | None) -> str:
        return " ".join(self.voice.card(card) for card in cards or [])

    def _choose(self, form: Form, body: Message) -> str:
        parent, _, name = form["choose"].rpartition(".")
        holder = self.at(body, parent) if parent else body
        if not isinstance(holder, Message):
            return ""
        enum = holder.DESCRIPTOR.fields_by_name[name].enum_type
        if enum is None:
            return ""
        chosen = form["ids"].get(enum.values_by_number[getattr(holder, name)].name)
        return self.voice.say(chosen, {}) if chosen else ""

    def at(self, body: Message, path: str) -> Any:
        """The value at `path` of `body` (or of the view, for `view.`): None where a message is not set
        or a list index is outside the list; `name[index]` indexes a list by the body's `index`."""
        value: Any = body
        steps = path.split(".")
        if steps[0] == "view":
            value, steps = self.view, steps[1:]
        for step in steps:
            name, _, index = step.partition("[")
            if not isinstance(value, Message):
                return None
            field = value.DESCRIPTOR.fields_by_name[name]
            if field.message_type is not None and not field.is_repeated and not value.HasField(name):
                return None
            value = getattr(value, name)
            if index:
                position = self.at(body, index.rstrip("]")) or 0
                value = value[position] if 0 <= position < len(value) else None
        return value


def _present(value: object) -> bool:
    """A path is set: a message there, a list with items, a scalar other than its zero."""
    if value is None or isinstance(value, Message):
        return value is not None
    if isinstance(value, int | str | float | bool):
        return bool(value)
    return len(value) > 0  # type: ignore[arg-type]


def _card(value: object) -> ev.Card:
    return value if isinstance(value, ev.Card) else ev.Card()
