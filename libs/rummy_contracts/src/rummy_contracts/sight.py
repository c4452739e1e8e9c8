"""Which logged cards a reader may see: one rule for the engine's live history, the export and the log.

A game's log holds every hidden card (deck orders, reshuffles, cards drawn from the stock). A reader
sees the hands of some seats (a player their own, an operator or anyone after the end every seat) and,
with `secrets`, the cards nobody holds yet. `redact` clears from an event what the reader may not see
and names what it cleared, so the engine, the export and the sentences of the log all hide the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from rummy.game.v1 import events_pb2 as ev


@dataclass(frozen=True, slots=True)
class Sight:
    """The hands of `seats` (None: every seat) and, with `secrets`, deck and stock orders."""

    seats: frozenset[int] | None
    secrets: bool
    note: str = ""

    def hand(self, seat: int) -> bool:
        return self.seats is None or seat in self.seats


EVERYTHING: Final = Sight(None, True, "the game is over: every hand, deck and reshuffle is shown")


def of_seat(seat: int | None) -> Sight:
    """A player's sight of a game still running (`seat` None: a spectator's, no hand at all)."""
    if seat is None:
        return Sight(frozenset(), False, "a spectator's view: hands and the stock are hidden")
    return Sight(frozenset({seat}), False, f"seat {seat}'s view: the other hands and the stock are hidden")


def hidden_fields(kind: str, body: object, sight: Sight) -> list[str]:
    """The fields of the event `body` (of oneof case `kind`) that `sight` may not see."""
    if kind in ("game_started", "deal_started"):
        return [] if sight.secrets else ["deck"]
    if kind == "stock_reshuffled":
        return [] if sight.secrets else ["cards"]
    seat = int(getattr(body, "seat", 0))
    if kind == "card_drawn" and not getattr(body, "from_discard", False) and not sight.hand(seat):
        return ["card"]
    if kind == "buy_granted" and not sight.hand(seat):
        return ["stock_card"]
    return []


def redact(message: ev.GameEvent, sight: Sight) -> list[str]:
    """Clear in `message` the cards `sight` may not see; the names of the fields cleared."""
    kind = message.WhichOneof("event")
    if kind is None:
        return []
    body = getattr(message, kind)
    hidden = hidden_fields(kind, body, sight)
    for name in hidden:
        body.ClearField(name)
    return hidden
