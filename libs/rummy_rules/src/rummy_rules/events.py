"""What happened: frozen, past-tense events. A game's state is a pure fold of these (`game.evolve`).

Events carry results (the meld after a layoff, the shuffled stock) so that replay needs neither
validation nor randomness. The log is server-side: `GameStarted` and `DealStarted` hold deck orders,
i.e. every hidden card of the deal; players only ever see `views.observe` output. No event holds the
seed before `GameEnded` reveals it (`GameStarted` has only its commitment), so the log cannot predict
a later deal or reshuffle; afterwards anyone can re-derive every deal and reshuffle
(`game.deal_seed`, `game.reshuffle_seed`) and check the seed against the commitment.
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
    """A deal ended.

    `winner` None: in kalooki a void deal (no penalties, same dealer deals again); in rummy500 and
    contract a deal nobody went out of, scored as usual. `penalties` are the points each seat adds
    to its total; in rummy500 that is the deal score (melded minus hand, may be negative).
    `stalemate`: the deal was stopped by meldstream M1 (stock cycles without progress), void or
    scored as the README's M1 says.
    """

    winner: int | None
    kalooki: bool
    penalties: tuple[int, ...]
    stalemate: bool = False


@dataclass(frozen=True, slots=True)
class GameEnded:
    """The game is over; the seed is revealed so anyone can verify every deal.

    `payouts`: kalooki prize-pool shares; rummy500 settlement (each loser pays the score
    difference, the winner receives the sum, src ¶11 D14); empty otherwise.
    """

    winners: tuple[int, ...]
    totals: tuple[int, ...]
    payouts: tuple[int, ...]
    seed: bytes


@dataclass(frozen=True, slots=True)
class BuyOffered:
    """Contract: a discard is exposed; the forehand has first right to it, others may buy (§3.7.1).

    The upcard's offer opens with its deal (`GameStarted`/`DealStarted`, src ¶25), not with this event.
    """

    card: Card
    forehand: int
    discarder: int | None


@dataclass(frozen=True, slots=True)
class BuyRequested:
    """Contract: `seat` called "kaupi!" first; granted if the forehand draws from the stock (D12)."""

    seat: int
    card: Card


@dataclass(frozen=True, slots=True)
class BuyGranted:
    """Contract: `seat` takes the bought discard and the top stock card, out of turn (src ¶22, D24)."""

    seat: int
    card: Card
    stock_card: Card
    buys_this_round: int
    penalty: int


@dataclass(frozen=True, slots=True)
class BuyWaived:
    """Contract: `seat` passed on buying `card` (PassBuy); it is not offered that card again (D27)."""

    seat: int
    card: Card


@dataclass(frozen=True, slots=True)
class BuyPassed:
    """Contract: the offer closed without a buy, the forehand having taken the card or not."""

    card: Card
    taken_by_forehand: bool


@dataclass(frozen=True, slots=True)
class SeatForfeited:
    """`seat` left the match for good (meldstream M3): `points` are added to its total now, the worst
    deal result any seat in the deal would score if it ended at this moment; the seat plays no
    further turn and no later deal, and it is never among the winners."""

    seat: int
    points: int


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
    | BuyOffered
    | BuyRequested
    | BuyGranted
    | BuyPassed
    | BuyWaived
    | SeatForfeited
)
