"""What happened: frozen, past-tense events. A game's state is a pure fold of these (`game.evolve`).

Events carry results (the meld after a layoff, the shuffled stock) so that replay needs neither
validation nor randomness. The log is server-side: `GameStarted` and `DealStarted` hold the deck
order and the seed, i.e. every hidden card; players only ever see `views.observe` output. The seed is
revealed in `GameEnded`, and anyone holding it can re-derive every deal and reshuffle
(`game.deal_seed`, `game.reshuffle_seed`) and check it against the commitment.
"""

from __future__ import annotations

from dataclasses import dataclass

from rummy_rules.cards import Card
from rummy_rules.melds import Meld

OptionValue = int | bool | str | None


@dataclass(frozen=True, slots=True)
class GameStarted:
    """A game began: rules, the seed commitment, the first dealer and the first deal's deck order."""

    variant: str
    players: int
    options: tuple[tuple[str, OptionValue], ...]
    seed_commitment: str
    seed: bytes
    dealer: int
    deck: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class DealStarted:
    """A further deal (next in a match, or a redeal after a void deal) with its deck order."""

    deal: int
    dealer: int
    deck: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class CardDrawn:
    seat: int
    card: Card
    from_discard: bool


@dataclass(frozen=True, slots=True)
class StockReshuffled:
    """The discard pile became the new stock, in this order (first card = top)."""

    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class MeldsLaid:
    seat: int
    melds: tuple[Meld, ...]


@dataclass(frozen=True, slots=True)
class CardsLaidOff:
    seat: int
    meld: int
    cards: tuple[Card, ...]
    result: Meld


@dataclass(frozen=True, slots=True)
class JokerSwapped:
    """`seat` gave `cards` to table meld `meld` and took one joker into hand."""

    seat: int
    meld: int
    cards: tuple[Card, ...]
    result: Meld


@dataclass(frozen=True, slots=True)
class CardDiscarded:
    seat: int
    card: Card


@dataclass(frozen=True, slots=True)
class DealEnded:
    """A deal ended: `winner` None means a void deal (no penalties, same dealer deals again)."""

    winner: int | None
    kalooki: bool
    penalties: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GameEnded:
    """The game is over; the seed is revealed so anyone can verify every deal."""

    winners: tuple[int, ...]
    totals: tuple[int, ...]
    payouts: tuple[int, ...]
    seed: bytes


Event = (
    GameStarted
    | DealStarted
    | CardDrawn
    | StockReshuffled
    | MeldsLaid
    | CardsLaidOff
    | JokerSwapped
    | CardDiscarded
    | DealEnded
    | GameEnded
)
