"""What a player asks to do: frozen commands, one per kind of move, checked by `game.decide`.

Seats are table positions 0..players-1. Card lists use the shared notation (`parse_cards`);
runs are written low to high with each joker at the position it stands for.
"""

from __future__ import annotations

from dataclasses import dataclass

from rummy_rules.cards import Card
from rummy_rules.melds import End, MeldKind


@dataclass(frozen=True, slots=True)
class DrawFromStock:
    """Draw the top card of the face-down stock."""

    seat: int


@dataclass(frozen=True, slots=True)
class TakeDiscard:
    """Take the top card of the discard pile as this turn's draw."""

    seat: int


@dataclass(frozen=True, slots=True)
class LayMelds:
    """Lay new melds from hand; the first melds of a player must reach the opening minimum together.

    `kinds[i]` names the kind of `melds[i]` when its cards could read as a set or a run; it may be
    left out (shorter than `melds`) otherwise.
    """

    seat: int
    melds: tuple[tuple[Card, ...], ...]
    kinds: tuple[MeldKind | None, ...] = ()


@dataclass(frozen=True, slots=True)
class LayOff:
    """Add cards from hand to table meld number `meld`; `at` says which run end a joker goes to."""

    seat: int
    meld: int
    cards: tuple[Card, ...]
    at: End | None = None


@dataclass(frozen=True, slots=True)
class SwapJoker:
    """Give `cards` to table meld `meld` for one of its jokers, then play `then`.

    Kalooki D10: the freed joker must be used in the same turn, so the release carries the meld or
    layoff that uses it and both are checked together. Where the joker may be kept (rummy40 D10),
    `then` may be None.
    """

    seat: int
    meld: int
    cards: tuple[Card, ...]
    then: LayMelds | LayOff | None = None


@dataclass(frozen=True, slots=True)
class Discard:
    """Discard one card, ending the turn (and the deal, if it was the last card where allowed)."""

    seat: int
    card: Card


@dataclass(frozen=True, slots=True)
class GoOut:
    """A whole going-out turn after the draw, checked as one: melds, then layoffs, then the discard."""

    seat: int
    melds: tuple[tuple[Card, ...], ...] = ()
    kinds: tuple[MeldKind | None, ...] = ()
    layoffs: tuple[LayOff, ...] = ()
    discard: Card | None = None


@dataclass(frozen=True, slots=True)
class PickFromPile:
    """Rummy 500: take discard-pile card `index` (0 = bottom) and every card above it.

    The selected card must be used at once (src ¶17, D7, D21): `then` is the meld or layoff that
    uses it, checked together with the draw. Only with option `top_discard_free` may the top
    card alone be taken with `then` None.
    """

    seat: int
    index: int
    then: LayMelds | LayOff | None = None


@dataclass(frozen=True, slots=True)
class BuyDiscard:
    """Contract: ask to buy the card on offer ("kaupi!"), out of turn (§3.7)."""

    seat: int


@dataclass(frozen=True, slots=True)
class PassBuy:
    """Contract: decline the card on offer. Changes nothing; it lets a client (or a bot) say so."""

    seat: int


Command = (
    DrawFromStock
    | TakeDiscard
    | LayMelds
    | LayOff
    | SwapJoker
    | Discard
    | GoOut
    | PickFromPile
    | BuyDiscard
    | PassBuy
)
