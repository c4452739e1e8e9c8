"""A game's events in words, worded for one reader: the web table's log, the terminal and the replay.

"Anna drew from the pile: 7♥", "You drew 7♥ from the stock" to the drawer while the others read
"Anna drew from the stock". One module words every event kind of every variant so the page, `meldstream
play`/`watch` and `meldstream replay` say the same. A `Narrator` reads the events in order (it learns
the names from `table_seated`); it words only what is in the event it is given, so an event first
cleared by `rummy_contracts.sight.redact` for its reader can never show a hidden card. The names are
other people's strings: the sentences are plain text, escaped by whoever shows them (the page sets
textContent, the terminal uses `rummy_service.text.printable`).
Meld numbers are 1-based (the first meld on the table is meld 1).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Final

from google.protobuf.message import Message
from rummy.game.v1 import events_pb2 as ev
from rummy.game.v1 import game_service_pb2 as gs

NAME_LIMIT: Final = 64
"""Characters of a seated name a sentence shows (names are limited at seating; this bounds any log)."""
SEED_HEX_SHOWN: Final = 16  # hex digits of a seat's seed a sentence shows (verify prints it whole)

_RANKS: Final = ("", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
_SUITS: Final = {ev.SUIT_CLUBS: "♣", ev.SUIT_DIAMONDS: "♦", ev.SUIT_HEARTS: "♥", ev.SUIT_SPADES: "♠"}
_VARIANTS: Final = {
    "kalooki": "Kalooki",
    "rummy40": "Rummy 40",
    "rummy500": "Rummy 500",
    "contract": "Contract rummy",
}


def card_words(card: ev.Card) -> str:
    """A card as people write it: `7♥`, `10♠`, `joker`."""
    suit = _SUITS.get(card.suit)
    if suit is None or not 1 <= card.rank <= 13:
        return "joker"
    return _RANKS[card.rank] + suit


def notation_words(text: str) -> str:
    """A card in the spec's notation (`7H`, `10S`, `JK`, as replay exports' states hold them) as
    `card_words` writes it."""
    symbol = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}.get(text[-1:])
    return "joker" if text == "JK" or symbol is None else text[:-1] + symbol


def cards_words(cards: Iterable[ev.Card]) -> str:
    return " ".join(card_words(card) for card in cards)


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _points(value: int) -> str:
    return f"+{value}" if value > 0 else str(value)


class Narrator:
    """Words the events of one game, in order, for `viewer` (their seat, or None for a spectator).

    `names`: the seats' names as the caller shows them (made printable, isolated); without them, the
    names seated in `table_seated`, cut at `NAME_LIMIT`.
    """

    def __init__(self, viewer: int | None = None, names: Sequence[str] = ()) -> None:
        self.viewer = viewer
        self.names = list(names)
        self._given = bool(names)
        self.dealer = 0
        self.seeding = False  # the game began without a deck: the first deal waits for the seats' seeds

    def name(self, seat: int, first: bool = True) -> str:
        """The seat's name, "You"/"you" (`first`: it starts the sentence) for the viewer's own seat."""
        if seat == self.viewer:
            return "You" if first else "you"
        if seat < len(self.names) and self.names[seat]:
            return self.names[seat]
        return f"Seat {seat + 1}"

    def _whose(self, seat: int) -> str:
        return "Your" if seat == self.viewer else f"{self.name(seat)}'s"

    def sentence(self, message: ev.GameEvent, by_timer: bool = False) -> str:
        """The event in words ("" for one a reader needs no line for); `by_timer`: the engine played it
        for a seat whose time ran out."""
        kind = message.WhichOneof("event")
        word = _WORDS.get(kind or "")
        if word is None:
            return f"(an event this version cannot word: {kind})"
        body = getattr(message, kind or "")
        if by_timer and isinstance(body, ev.CardDrawn | ev.CardDiscarded):
            return f"{self._whose(body.seat)} time ran out: auto-{self._auto(body)}"
        return word(self, body)

    def _auto(self, e: ev.CardDrawn | ev.CardDiscarded) -> str:
        """What the engine did for a seat whose time ran out, after "auto-"."""
        if isinstance(e, ev.CardDiscarded):
            return f"discard {card_words(e.card)}"
        if e.from_discard:
            return f"draw from the pile: {card_words(e.card)}"
        return f"draw {card_words(e.card)} from the stock" if e.HasField("card") else "draw from the stock"

    def lines(self, entries: Iterable[gs.HistoryEntry]) -> list[tuple[int, str]]:
        """(seq, sentence) of each entry of a history (GetHistory's) that has one, in order."""
        out = []
        for entry in entries:
            text = self.sentence(entry.event, entry.by_timer)
            if text:
                out.append((entry.event.seq, text))
        return out

    # --- each kind ---------------------------------------------------------------------------------

    def game_started(self, e: ev.GameStarted) -> str:
        self.dealer = e.dealer
        self.seeding = not e.deck
        return f"A game of {_VARIANTS.get(e.variant, e.variant[:NAME_LIMIT])} for {e.players} players began."

    def table_seated(self, e: ev.TableSeated) -> str:
        self.names = (
            self.names
            if self._given
            else [
                (name or player)[:NAME_LIMIT]
                for name, player in zip(
                    list(e.player_names) + [""] * (len(e.player_ids) - len(e.player_names)),
                    e.player_ids,
                    strict=False,
                )
            ]
        )
        seated = [self.name(seat, first=False) for seat in range(len(self.names))]
        if self.seeding:
            return f"At the table: {_and(seated)}. The seats may send their seeds before the first deal."
        return f"At the table: {_and(seated)}. {self.name(self.dealer)} dealt deal 1."

    def deal_started(self, e: ev.DealStarted) -> str:
        self.dealer = e.dealer
        if self.seeding:
            self.seeding = False
            return f"Deal 1: {self.name(e.dealer)} dealt."
        return f"Deal {e.deal + 1}: {self.name(e.dealer)} dealt."

    def card_drawn(self, e: ev.CardDrawn) -> str:
        who = self.name(e.seat)
        if e.from_discard:
            return f"{who} drew from the pile: {card_words(e.card)}"
        if e.HasField("card"):
            return f"{who} drew {card_words(e.card)} from the stock"
        return f"{who} drew from the stock"

    def stock_reshuffled(self, e: ev.StockReshuffled) -> str:
        return "The stock ran out: the discard pile was shuffled into a new stock"

    def melds_laid(self, e: ev.MeldsLaid) -> str:
        return f"{self.name(e.seat)} melded {_and([cards_words(m.cards) for m in e.melds])}"

    def cards_laid_off(self, e: ev.CardsLaidOff) -> str:
        return (
            f"{self.name(e.seat)} laid off {cards_words(e.cards)} on meld {e.meld + 1}"
            f" (now {cards_words(e.result.cards)})"
        )

    def joker_swapped(self, e: ev.JokerSwapped) -> str:
        return (
            f"{self.name(e.seat)} swapped {cards_words(e.cards)} for the joker in meld {e.meld + 1}"
            f" (now {cards_words(e.result.cards)})"
        )

    def card_discarded(self, e: ev.CardDiscarded) -> str:
        return f"{self.name(e.seat)} discarded {card_words(e.card)}"

    def deal_ended(self, e: ev.DealEnded) -> str:
        scores = ", ".join(
            f"{self.name(seat, first=False)} {_points(points)}" for seat, points in enumerate(e.penalties)
        )
        stopped = "The deal was stopped (no progress): " if e.stalemate else ""
        if e.HasField("winner"):
            out = f"{self.name(e.winner)} went out"
            if e.kalooki:
                out += " all at once"
            return f"{stopped}{out}. Deal scores: {scores}."
        if not any(e.penalties):
            return f"{stopped}Nobody went out: a void deal, dealt again."
        return f"{stopped}Nobody went out. Deal scores: {scores}."

    def game_ended(self, e: ev.GameEnded) -> str:
        names = [self.name(seat, first=False) for seat in range(max(len(e.totals), len(self.names)))]
        winners = _and([names[seat] for seat in e.winners]) if e.winners else "nobody"
        won = "win" if len(e.winners) > 1 or (e.winners and e.winners[0] == self.viewer) else "wins"
        totals = ", ".join(f"{names[seat]} {total}" for seat, total in enumerate(e.totals))
        out = f"Game over: {winners} {won}. Totals: {totals}."
        if e.payouts:
            pays = ", ".join(f"{names[seat]} {_points(p)}" for seat, p in enumerate(e.payouts))
            out += f" Payouts: {pays}."
        return out

    def buy_offered(self, e: ev.BuyOffered) -> str:
        start = f"{self.name(e.discarder)} discarded it: " if e.HasField("discarder") else ""
        return f"{start}{card_words(e.card)} is on offer, {self.name(e.forehand, first=False)} first"

    def buy_requested(self, e: ev.BuyRequested) -> str:
        return f"{self.name(e.seat)} asked to buy {card_words(e.card)}"

    def buy_granted(self, e: ev.BuyGranted) -> str:
        extra = " and a card from the stock"
        if e.HasField("stock_card"):
            extra = f" and {card_words(e.stock_card)}"
        penalty = f" (penalty {e.penalty})" if e.penalty else ""
        return f"{self.name(e.seat)} bought {card_words(e.card)}{extra}{penalty}"

    def buy_waived(self, e: ev.BuyWaived) -> str:
        return f"{self.name(e.seat)} passed on {card_words(e.card)}"

    def buy_passed(self, e: ev.BuyPassed) -> str:
        if e.taken_by_forehand:
            return f"Nobody bought {card_words(e.card)}: the next player took it"
        return f"Nobody bought {card_words(e.card)}"

    def turn_timed_out(self, e: ev.TurnTimedOut) -> str:
        # The events of the turn the engine plays say "…'s time ran out: auto-…"; this line only when
        # a seat keeps timing out.
        if e.in_a_row > 1:
            return f"{self._whose(e.seat)} time ran out again ({e.in_a_row} turns in a row)"
        return ""

    def player_away(self, e: ev.PlayerAway) -> str:
        return f"{self.name(e.seat)} {'are' if e.seat == self.viewer else 'is'} away"

    def player_returned(self, e: ev.PlayerReturned) -> str:
        return f"{self.name(e.seat)} {'are' if e.seat == self.viewer else 'is'} back"

    def seed_contributed(self, e: ev.SeedContributed) -> str:
        return f"{self.name(e.seat)} sent a seed for the shuffle: {e.seed.hex()[:SEED_HEX_SHOWN]}…"


_WORDS: Final[dict[str, Callable[[Narrator, Message], str]]] = {
    kind: getattr(Narrator, kind)
    for kind in (
        "game_started",
        "table_seated",
        "deal_started",
        "card_drawn",
        "stock_reshuffled",
        "melds_laid",
        "cards_laid_off",
        "joker_swapped",
        "card_discarded",
        "deal_ended",
        "game_ended",
        "buy_offered",
        "buy_requested",
        "buy_granted",
        "buy_waived",
        "buy_passed",
        "turn_timed_out",
        "player_away",
        "player_returned",
        "seed_contributed",
    )
}
"""Every oneof case of `GameEvent` -> its wording (a test checks none is missing)."""
