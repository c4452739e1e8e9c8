"""The log in words: every event kind is worded, per viewer, and a card the viewer may not see never
appears (the events are first cleared by `sight.redact`, as the engine clears them)."""

from __future__ import annotations

import pytest
from rummy.game.v1 import events_pb2
from rummy_contracts import event_format, sight
from rummy_contracts.event_format import Logged
from rummy_contracts.facts import (
    PlayerAway,
    PlayerReturned,
    SeatDisconnected,
    SeatReconnected,
    SeedContributed,
    TableSeated,
    TimeBankUsed,
    TurnTimedOut,
)
from rummy_contracts.sentences import Narrator
from rummy_rules.cards import Suit, parse_cards
from rummy_rules.events import (
    BuyGranted,
    BuyOffered,
    BuyPassed,
    BuyRequested,
    BuyWaived,
    CardDiscarded,
    CardDrawn,
    CardsLaidOff,
    DealEnded,
    DealStarted,
    GameEnded,
    GameStarted,
    JokerSwapped,
    MeldsLaid,
    SeatForfeited,
    StockReshuffled,
)
from rummy_rules.melds import Meld, MeldKind

RUN = Meld(MeldKind.RUN, parse_cards("3C 4C 5C"), 3, Suit.CLUBS)
SEATED = TableSeated(("p-anna", "p-bo", "p-cy"), 0, (), "p-anna", player_names=("Anna", "Bo", "Cy"))
DECK = parse_cards("QD QS QH")  # a deck order nobody may read while the game runs

# Each event with what Anna (seat 0), Bo (seat 1) and a spectator read.
WORDED: list[tuple[Logged, str, str, str]] = [
    (
        GameStarted("kalooki", 3, (), "c0ffee", 0, DECK),
        "A game of Kalooki for 3 players began.",
        "A game of Kalooki for 3 players began.",
        "A game of Kalooki for 3 players began.",
    ),
    (
        SEATED,
        "At the table: you, Bo and Cy. You dealt deal 1.",
        "At the table: Anna, you and Cy. Anna dealt deal 1.",
        "At the table: Anna, Bo and Cy. Anna dealt deal 1.",
    ),
    (DealStarted(1, 1, DECK), "Deal 2: Bo dealt.", "Deal 2: You dealt.", "Deal 2: Bo dealt."),
    (
        CardDrawn(0, parse_cards("7H")[0], False),
        "You drew 7♥ from the stock",
        "Anna drew from the stock",
        "Anna drew from the stock",
    ),
    (
        CardDrawn(0, parse_cards("7H")[0], True),
        "You drew from the pile: 7♥",
        "Anna drew from the pile: 7♥",
        "Anna drew from the pile: 7♥",
    ),
    (
        StockReshuffled(DECK),
        "The stock ran out: the discard pile was shuffled into a new stock",
        "The stock ran out: the discard pile was shuffled into a new stock",
        "The stock ran out: the discard pile was shuffled into a new stock",
    ),
    (MeldsLaid(1, (RUN,)), "Bo melded 3♣ 4♣ 5♣", "You melded 3♣ 4♣ 5♣", "Bo melded 3♣ 4♣ 5♣"),
    (
        CardsLaidOff(2, 0, parse_cards("6C"), Meld(MeldKind.RUN, parse_cards("3C 4C 5C 6C"), 3, Suit.CLUBS)),
        "Cy laid off 6♣ on meld 1 (now 3♣ 4♣ 5♣ 6♣)",
        "Cy laid off 6♣ on meld 1 (now 3♣ 4♣ 5♣ 6♣)",
        "Cy laid off 6♣ on meld 1 (now 3♣ 4♣ 5♣ 6♣)",
    ),
    (
        JokerSwapped(0, 1, parse_cards("5H"), Meld(MeldKind.RUN, parse_cards("4H 5H 6H"), 4, Suit.HEARTS)),
        "You swapped 5♥ for the joker in meld 2 (now 4♥ 5♥ 6♥)",
        "Anna swapped 5♥ for the joker in meld 2 (now 4♥ 5♥ 6♥)",
        "Anna swapped 5♥ for the joker in meld 2 (now 4♥ 5♥ 6♥)",
    ),
    (CardDiscarded(2, parse_cards("KS")[0]), "Cy discarded K♠", "Cy discarded K♠", "Cy discarded K♠"),
    (
        DealEnded(1, True, (24, 0, -5)),
        "Bo went out all at once. Deal scores: you +24, Bo 0, Cy -5.",
        "You went out all at once. Deal scores: Anna +24, you 0, Cy -5.",
        "Bo went out all at once. Deal scores: Anna +24, Bo 0, Cy -5.",
    ),
    (
        DealEnded(None, False, (0, 0, 0)),
        "Nobody went out: a void deal, dealt again.",
        "Nobody went out: a void deal, dealt again.",
        "Nobody went out: a void deal, dealt again.",
    ),
    (
        DealEnded(None, False, (10, 20, 30), stalemate=True),
        "The deal was stopped (no progress): Nobody went out. Deal scores: you +10, Bo +20, Cy +30.",
        "The deal was stopped (no progress): Nobody went out. Deal scores: Anna +10, you +20, Cy +30.",
        "The deal was stopped (no progress): Nobody went out. Deal scores: Anna +10, Bo +20, Cy +30.",
    ),
    (
        GameEnded((0,), (12, 80, 95), (), b"\x01" * 32),
        "Game over: you win. Totals: you 12, Bo 80, Cy 95.",
        "Game over: Anna wins. Totals: Anna 12, you 80, Cy 95.",
        "Game over: Anna wins. Totals: Anna 12, Bo 80, Cy 95.",
    ),
    (
        GameEnded((1,), (-20, 40, -20), (-20, 40, -20), b"\x01" * 32),
        "Game over: Bo wins. Totals: you -20, Bo 40, Cy -20. Payouts: you -20, Bo +40, Cy -20.",
        "Game over: you win. Totals: Anna -20, you 40, Cy -20. Payouts: Anna -20, you +40, Cy -20.",
        "Game over: Bo wins. Totals: Anna -20, Bo 40, Cy -20. Payouts: Anna -20, Bo +40, Cy -20.",
    ),
    (
        BuyOffered(parse_cards("KS")[0], 0, 2),
        "Cy discarded it: K♠ is on offer, you first",
        "Cy discarded it: K♠ is on offer, Anna first",
        "Cy discarded it: K♠ is on offer, Anna first",
    ),
    (
        BuyRequested(1, parse_cards("KS")[0]),
        "Bo asked to buy K♠",
        "You asked to buy K♠",
        "Bo asked to buy K♠",
    ),
    (
        BuyGranted(1, parse_cards("KS")[0], parse_cards("QD")[0], 1, 0),
        "Bo bought K♠ and a card from the stock",
        "You bought K♠ and Q♦",
        "Bo bought K♠ and a card from the stock",
    ),
    (BuyWaived(2, parse_cards("KS")[0]), "Cy passed on K♠", "Cy passed on K♠", "Cy passed on K♠"),
    (
        BuyPassed(parse_cards("KS")[0], True),
        "Nobody bought K♠: the next player took it",
        "Nobody bought K♠: the next player took it",
        "Nobody bought K♠: the next player took it",
    ),
    (
        TurnTimedOut(2, 2, False),
        "Cy's time ran out again (2 turns in a row)",
        "Cy's time ran out again (2 turns in a row)",
        "Cy's time ran out again (2 turns in a row)",
    ),
    (PlayerAway(1), "Bo is away", "You are away", "Bo is away"),
    (PlayerReturned(1), "Bo is back", "You are back", "Bo is back"),
    (
        SeedContributed(1, bytes(range(16))),
        "Bo sent a seed for the shuffle: 0001020304050607…",
        "You sent a seed for the shuffle: 0001020304050607…",
        "Bo sent a seed for the shuffle: 0001020304050607…",
    ),
    (
        SeatDisconnected(1, 25_000, 1_765_000_000_000, 3),
        "Bo disconnected: the seat is kept for 25 s",
        "You disconnected: your seat is kept for 25 s",
        "Bo disconnected: the seat is kept for 25 s",
    ),
    (SeatReconnected(1), "Bo reconnected", "You reconnected", "Bo reconnected"),
    (
        SeatForfeited(1, 87),
        "Bo forfeited the match (+87 points)",
        "You forfeited the match (+87 points)",
        "Bo forfeited the match (+87 points)",
    ),
    (
        TimeBankUsed(1, 2_500),
        "Bo used 2.5 s of the time bank",
        "You used 2.5 s of your time bank",
        "Bo used 2.5 s of the time bank",
    ),
]
HIDDEN = ("Q♦", "Q♠", "Q♥")  # the deck's and the bought stock card's: shown only to their holder


def _worded(event: Logged, viewer: int | None, by_timer: bool = False) -> str:
    narrator = Narrator(viewer)
    narrator.sentence(_seen(SEATED, viewer))
    return narrator.sentence(_seen(event, viewer), by_timer)


def _seen(event: Logged, viewer: int | None) -> events_pb2.GameEvent:
    message = event_format.envelope("g", 1, "c", event, 0.0)
    sight.redact(message, sight.of_seat(viewer))
    return message


def test_every_event_kind_is_worded() -> None:
    assert {event_format.event_type(event) for event, *_ in WORDED} == set(event_format.EVENT_CLASSES)


@pytest.mark.parametrize(("event", "anna", "bo", "spectator"), WORDED, ids=lambda v: type(v).__name__)
def test_each_viewer_reads_their_own_sentence(event: Logged, anna: str, bo: str, spectator: str) -> None:
    assert [_worded(event, 0), _worded(event, 1), _worded(event, None)] == [anna, bo, spectator]


@pytest.mark.parametrize("viewer", [0, 1, 2, None])
def test_a_hidden_card_is_never_worded(viewer: int | None) -> None:
    for event, *_ in WORDED:
        text = _worded(event, viewer)
        holder = getattr(event, "seat", None)
        if not (isinstance(event, BuyGranted) and holder == viewer):
            assert not any(card in text for card in HIDDEN), text


def test_after_the_end_every_card_is_worded() -> None:
    narrator = Narrator(None, ("Anna", "Bo"))
    message = event_format.envelope("g", 1, "c", CardDrawn(0, parse_cards("7H")[0], False), 0.0)
    sight.redact(message, sight.EVERYTHING)
    assert narrator.sentence(message) == "Anna drew 7♥ from the stock"


def test_the_turns_the_engine_played_say_so() -> None:
    drawn, discarded = CardDrawn(2, parse_cards("7H")[0], False), CardDiscarded(2, parse_cards("KS")[0])
    assert _worded(TurnTimedOut(2, 1, False), None, True) == ""
    assert _worded(drawn, None, True) == "Cy's time ran out: auto-draw from the stock"
    assert _worded(drawn, 2, True) == "Your time ran out: auto-draw 7♥ from the stock"
    assert _worded(discarded, 0, True) == "Cy's time ran out: auto-discard K♠"


def test_names_are_cut_and_left_for_the_reader_to_escape() -> None:
    narrator = Narrator(None)
    hostile = "<b>\x1b[31m" + "x" * 100
    narrator.sentence(_seen(TableSeated(("p",), 0, (), "p", player_names=(hostile,)), None))
    text = narrator.sentence(_seen(PlayerAway(0), None))
    assert text.startswith("<b>\x1b[31m") and len(text) < 80
    shown = Narrator(None, ("«Anna»",))  # names the caller made printable are kept, seating or not
    shown.sentence(_seen(SEATED, None))
    assert shown.sentence(_seen(PlayerAway(0), None)) == "«Anna» is away"
    assert Narrator(None, ()).sentence(_seen(PlayerAway(3), None)) == "Seat 4 is away"


def test_a_game_that_waits_for_seeds_says_so_and_numbers_its_first_deal_1() -> None:
    narrator = Narrator(None)
    opened: list[Logged] = [GameStarted("kalooki", 3, (), "c0ffee", 0, ()), SEATED, DealStarted(1, 2, DECK)]
    assert [narrator.sentence(_seen(event, None)) for event in opened] == [
        "A game of Kalooki for 3 players began.",
        "At the table: Anna, Bo and Cy. The seats may send their seeds before the first deal.",
        "Deal 1: Cy dealt.",
    ]
