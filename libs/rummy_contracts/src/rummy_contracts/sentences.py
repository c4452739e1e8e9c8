"""A game's events in words, worded for one reader: the web table's log, the terminal and the replay.

"Anna drew from the pile: 7♥", "You drew 7♥ from the stock" to the drawer while the others read
"Anna drew from the stock". One module words every event kind of every variant so the page, `meldstream
play`/`watch` and `meldstream replay` say the same. A `Narrator` reads the events in order (it learns
the names from `table_seated`); it words only what is in the event it is given, so an event first
cleared by `rummy_contracts.sight.redact` for its reader can never show a hidden card. The names are
other people's strings: the sentences are plain text, escaped by whoever shows them (the page sets
textContent, the terminal uses `rummy_service.text.printable`).
Meld numbers are 1-based (the first meld on the table is meld 1). The words are the message catalogue's
(`rummy_contracts.catalogue`), in the language of the `Words` given (English by default).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Final

from google.protobuf.message import Message
from rummy.game.v1 import events_pb2 as ev
from rummy.game.v1 import game_service_pb2 as gs

from rummy_contracts.catalogue import Words, words

NAME_LIMIT: Final = 64
"""Characters of a seated name a sentence shows (names are limited at seating; this bounds any log)."""
SEED_HEX_SHOWN: Final = 16  # hex digits of a seat's seed a sentence shows (verify prints it whole)

_RANKS: Final = ("", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
_SUITS: Final = {ev.SUIT_CLUBS: "♣", ev.SUIT_DIAMONDS: "♦", ev.SUIT_HEARTS: "♥", ev.SUIT_SPADES: "♠"}
_VARIANTS: Final = ("kalooki", "rummy40", "rummy500", "contract")
ENGLISH: Final = words()


def card_words(card: ev.Card, say: Words = ENGLISH) -> str:
    """A card as people write it: `7♥`, `10♠`, `joker` (in `say`'s language)."""
    suit = _SUITS.get(card.suit)
    if suit is None or not 1 <= card.rank <= 13:
        return say("card.joker")
    return _RANKS[card.rank] + suit


def notation_words(text: str, say: Words = ENGLISH) -> str:
    """A card in the spec's notation (`7H`, `10S`, `JK`, as replay exports' states hold them) as
    `card_words` writes it."""
    symbol = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}.get(text[-1:])
    return say("card.joker") if text == "JK" or symbol is None else text[:-1] + symbol


def cards_words(cards: Iterable[ev.Card], say: Words = ENGLISH) -> str:
    return " ".join(card_words(card, say) for card in cards)


def _points(value: int) -> str:
    return f"+{value}" if value > 0 else str(value)


def variant_words(variant: str, say: Words = ENGLISH) -> str:
    """A variant's name as people say it ("Rummy 500"); an unknown one as it is, cut."""
    return say(f"variant.{variant}") if variant in _VARIANTS else variant[:NAME_LIMIT]


class Narrator:
    """Words the events of one game, in order, for `viewer` (their seat, or None for a spectator), in
    the language of `say` (the catalogue's `log.*` messages; a `*_you` one when the viewer is the one
    acting, since most languages conjugate for "you").

    `names`: the seats' names as the caller shows them (made printable, isolated); without them, the
    names seated in `table_seated`, cut at `NAME_LIMIT`.
    """

    def __init__(self, viewer: int | None = None, names: Sequence[str] = (), say: Words = ENGLISH) -> None:
        self.viewer = viewer
        self.names = list(names)
        self._given = bool(names)
        self.dealer = 0
        self.say = say
        self.seeding = False  # the game began without a deck: the first deal waits for the seats' seeds

    def name(self, seat: int, first: bool = True) -> str:
        """The seat's name, "You"/"you" (`first`: it starts the sentence) for the viewer's own seat."""
        if seat == self.viewer:
            return self.say("log.you" if first else "log.you_after")
        if seat < len(self.names) and self.names[seat]:
            return self.names[seat]
        return self.say("log.seat", seat=seat + 1)

    def _by(self, key: str, seat: int, **params: object) -> str:
        """Message `key` of `seat` acting: its `_you` form for the viewer, else with `{who}`."""
        if seat == self.viewer:
            return self.say(f"{key}_you", **params)
        return self.say(key, who=self.name(seat), **params)

    def _card(self, card: ev.Card) -> str:
        return card_words(card, self.say)

    def _cards(self, cards: Iterable[ev.Card]) -> str:
        return cards_words(cards, self.say)

    def sentence(self, message: ev.GameEvent, by_timer: bool = False) -> str:
        """The event in words ("" for one a reader needs no line for); `by_timer`: the engine played it
        for a seat whose time ran out."""
        kind = message.WhichOneof("event")
        word = _WORDS.get(kind or "")
        if word is None:
            return self.say("log.unknown", kind=kind)
        body = getattr(message, kind or "")
        if by_timer and isinstance(body, ev.CardDrawn | ev.CardDiscarded):
            return self._by("log.auto", body.seat, what=self._auto(body))
        return word(self, body)

    def _auto(self, e: ev.CardDrawn | ev.CardDiscarded) -> str:
        """What the engine did for a seat whose time ran out, after "auto-"."""
        if isinstance(e, ev.CardDiscarded):
            return self.say("log.auto_discard", card=self._card(e.card))
        if e.from_discard:
            return self.say("log.auto_draw_pile", card=self._card(e.card))
        if e.HasField("card"):
            return self.say("log.auto_draw_stock_card", card=self._card(e.card))
        return self.say("log.auto_draw_stock")

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
        return self.say.count("log.game_started", e.players, variant=variant_words(e.variant, self.say))

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
        seated = self.say.join(self.name(seat, first=False) for seat in range(len(self.names)))
        if self.seeding:
            return self.say("log.table_seated_seeding", names=seated)
        return self._by("log.table_seated", self.dealer, names=seated)

    def deal_started(self, e: ev.DealStarted) -> str:
        self.dealer = e.dealer
        deal = 1 if self.seeding else e.deal + 1  # the first deal after the seeds: deal 1
        self.seeding = False
        return self._by("log.deal_started", e.dealer, deal=deal)

    def card_drawn(self, e: ev.CardDrawn) -> str:
        if e.from_discard:
            return self._by("log.drew_pile", e.seat, card=self._card(e.card))
        if e.HasField("card"):
            return self._by("log.drew_stock_card", e.seat, card=self._card(e.card))
        return self._by("log.drew_stock", e.seat)

    def stock_reshuffled(self, e: ev.StockReshuffled) -> str:
        return self.say("log.stock_reshuffled")

    def melds_laid(self, e: ev.MeldsLaid) -> str:
        return self._by("log.melded", e.seat, melds=self.say.join(self._cards(m.cards) for m in e.melds))

    def cards_laid_off(self, e: ev.CardsLaidOff) -> str:
        return self._by(
            "log.laid_off",
            e.seat,
            cards=self._cards(e.cards),
            meld=e.meld + 1,
            result=self._cards(e.result.cards),
        )

    def joker_swapped(self, e: ev.JokerSwapped) -> str:
        return self._by(
            "log.swapped",
            e.seat,
            cards=self._cards(e.cards),
            meld=e.meld + 1,
            result=self._cards(e.result.cards),
        )

    def card_discarded(self, e: ev.CardDiscarded) -> str:
        return self._by("log.discarded", e.seat, card=self._card(e.card))

    def deal_ended(self, e: ev.DealEnded) -> str:
        separator = self.say("list.separator")
        scores = separator.join(
            self.say("log.score", who=self.name(seat, first=False), points=_points(points))
            for seat, points in enumerate(e.penalties)
        )
        if e.HasField("winner"):
            out = self._by("log.went_out_all" if e.kalooki else "log.went_out", e.winner, scores=scores)
        elif not any(e.penalties):
            out = self.say("log.void_deal")
        else:
            out = self.say("log.nobody_out", scores=scores)
        return self.say("log.stalemate", rest=out) if e.stalemate else out

    def game_ended(self, e: ev.GameEnded) -> str:
        names = [self.name(seat, first=False) for seat in range(max(len(e.totals), len(self.names)))]
        separator = self.say("list.separator")
        totals = separator.join(
            self.say("log.score", who=names[seat], points=total) for seat, total in enumerate(e.totals)
        )
        if not e.winners:
            out = self.say("log.game_over_nobody", totals=totals)
        elif list(e.winners) == [self.viewer]:
            out = self.say("log.game_over_you", totals=totals)
        else:
            winners = self.say.join(names[seat] for seat in e.winners)
            out = self.say.count("log.game_over", len(e.winners), winners=winners, totals=totals)
        if e.payouts:
            pays = separator.join(
                self.say("log.score", who=names[seat], points=_points(p)) for seat, p in enumerate(e.payouts)
            )
            out += self.say("log.payouts", payouts=pays)
        return out

    def buy_offered(self, e: ev.BuyOffered) -> str:
        offer = self.say("log.offered", card=self._card(e.card), forehand=self.name(e.forehand, first=False))
        return self._by("log.offered_after", e.discarder, offer=offer) if e.HasField("discarder") else offer

    def buy_requested(self, e: ev.BuyRequested) -> str:
        return self._by("log.buy_asked", e.seat, card=self._card(e.card))

    def buy_granted(self, e: ev.BuyGranted) -> str:
        card = self._card(e.card)
        if e.HasField("stock_card"):
            out = self._by("log.bought_seen", e.seat, card=card, stock=self._card(e.stock_card))
        else:
            out = self._by("log.bought", e.seat, card=card)
        return out + (self.say("log.buy_penalty", penalty=e.penalty) if e.penalty else "")

    def buy_waived(self, e: ev.BuyWaived) -> str:
        return self._by("log.buy_waived", e.seat, card=self._card(e.card))

    def buy_passed(self, e: ev.BuyPassed) -> str:
        key = "log.buy_passed_forehand" if e.taken_by_forehand else "log.buy_passed"
        return self.say(key, card=self._card(e.card))

    def turn_timed_out(self, e: ev.TurnTimedOut) -> str:
        # The events of the turn the engine plays say "…'s time ran out: auto-…"; this line only when
        # a seat keeps timing out.
        if e.in_a_row <= 1:
            return ""
        if e.seat == self.viewer:
            return self.say.count("log.timed_out_again_you", e.in_a_row)
        return self.say.count("log.timed_out_again", e.in_a_row, who=self.name(e.seat))

    def player_away(self, e: ev.PlayerAway) -> str:
        return self._by("log.away", e.seat)

    def player_returned(self, e: ev.PlayerReturned) -> str:
        return self._by("log.back", e.seat)

    def seed_contributed(self, e: ev.SeedContributed) -> str:
        return self._by("log.seed_sent", e.seat, seed=e.seed.hex()[:SEED_HEX_SHOWN])

    def seat_disconnected(self, e: ev.SeatDisconnected) -> str:
        return self._by("log.disconnected", e.seat, seconds=_seconds(e.grace_ms))

    def seat_reconnected(self, e: ev.SeatReconnected) -> str:
        return self._by("log.reconnected", e.seat)

    def seat_forfeited(self, e: ev.SeatForfeited) -> str:
        return self._by("log.forfeited", e.seat, points=_points(e.points))

    def time_bank_used(self, e: ev.TimeBankUsed) -> str:
        return self._by("log.bank_used", e.seat, seconds=_seconds(e.used_ms))


def _seconds(ms: int) -> str:
    """Milliseconds as seconds people read: whole ones, or one decimal under ten."""
    return f"{ms / 1000:.1f}" if ms < 10_000 and ms % 1000 else str(round(ms / 1000))


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
        "seat_forfeited",
        "seat_disconnected",
        "seat_reconnected",
        "time_bank_used",
    )
}
"""Every oneof case of `GameEvent` -> its wording (a test checks none is missing)."""
