"""Cards, packs and the verifiable shuffle, in the notation every spec and vector uses.

A card is written rank + suit (`AH`, `10S`, `QD`) or `JK` for a joker. Cards are interned:
`parse_card("7H") is parse_card("7H")`, so equality and hashing are cheap on hot paths.
Copies from several packs are the same value and interchangeable, as the specs require.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable, Sequence
from enum import Enum
from typing import Final


class Suit(Enum):
    """The four suits; no ranking between them (kalooki D22)."""

    CLUBS = "C"
    DIAMONDS = "D"
    HEARTS = "H"
    SPADES = "S"


SUITS: Final = (Suit.CLUBS, Suit.DIAMONDS, Suit.HEARTS, Suit.SPADES)
RANK_NAMES: Final = ("", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
_RANK_BY_NAME: Final = {name: rank for rank, name in enumerate(RANK_NAMES) if name}


class CardError(ValueError):
    """A card could not be parsed: the text says which token and what is expected."""


class Card:
    """One playing card. `rank` is 1 (ace) to 13 (king), 0 for the joker; `suit` is None for it."""

    __slots__ = ("code", "rank", "suit", "text")

    rank: int
    suit: Suit | None
    code: int
    text: str

    def __new__(cls, rank: int, suit: Suit | None) -> Card:
        key = (rank, suit)
        cached = _INTERNED.get(key)
        if cached is not None:
            return cached
        if (suit is None and rank != 0) or (suit is not None and not 1 <= rank <= 13):
            raise CardError(f"no such card: rank {rank}, suit {suit}")
        card = super().__new__(cls)
        object.__setattr__(card, "rank", rank)
        object.__setattr__(card, "suit", suit)
        # code: 0 for the joker, else 1 + suit index * 13 + (rank - 1); dense, sortable.
        code = 0 if suit is None else 1 + SUITS.index(suit) * 13 + rank - 1
        object.__setattr__(card, "code", code)
        object.__setattr__(card, "text", "JK" if suit is None else RANK_NAMES[rank] + suit.value)
        _INTERNED[key] = card
        return card

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("cards are immutable")

    def __reduce__(self) -> tuple[type[Card], tuple[int, Suit | None]]:
        return (Card, (self.rank, self.suit))

    @property
    def is_joker(self) -> bool:
        return self.suit is None

    def __repr__(self) -> str:
        return f"Card({self.text})"

    def __str__(self) -> str:
        return self.text

    def __lt__(self, other: Card) -> bool:
        return self.code < other.code


_INTERNED: dict[tuple[int, Suit | None], Card] = {}
JOKER: Final = Card(0, None)
STANDARD_PACK: Final = tuple(Card(rank, suit) for suit in SUITS for rank in range(1, 14))
CARD_BY_CODE: Final = (JOKER, *STANDARD_PACK)
_CARD_BY_TEXT: Final = {card.text: card for card in CARD_BY_CODE}


def parse_card(text: str) -> Card:
    """Parse one card such as `AH`, `10S` or `JK`; raise CardError naming the bad token."""
    card = _CARD_BY_TEXT.get(text.strip().upper()) if isinstance(text, str) else None
    if card is None:
        raise CardError(
            f"not a card: {text!r} (expected rank A 2-10 J Q K + suit C D H S, e.g. 'AH', '10S', or 'JK')"
        )
    return card


def parse_cards(text: str | Iterable[str]) -> tuple[Card, ...]:
    """Parse `"AS 10H JK"` or `["AS", "10H", "JK"]` into cards, in order."""
    tokens = text.split() if isinstance(text, str) else list(text)
    return tuple(parse_card(token) for token in tokens)


def format_cards(cards: Iterable[Card]) -> str:
    """Render cards as space-separated notation: the inverse of `parse_cards`."""
    return " ".join(card.text for card in cards)


def make_deck(packs: int, jokers: int) -> tuple[Card, ...]:
    """`packs` standard 52-card packs plus `jokers` jokers in total, in a fixed order."""
    if packs < 1 or jokers < 0:
        raise ValueError(f"a deck needs at least one pack and no negative jokers, got {packs}, {jokers}")
    return STANDARD_PACK * packs + (JOKER,) * jokers


def seed_commitment(seed: bytes) -> str:
    """The public SHA-256 commitment (hex) to a deal seed, published before the seed is revealed."""
    return hashlib.sha256(seed).hexdigest()


def shuffle(deck: Sequence[Card], seed: bytes) -> tuple[Card, ...]:
    """Shuffle `deck` deterministically from `seed`, reproducible in any language.

    Fisher-Yates from the last position down; each index j in [0, i] is drawn from a stream of
    64-bit big-endian words, the SHA-256 digests of `seed + counter` (counter: 8-byte big-endian,
    from 0), rejecting words at or above the largest multiple of i + 1 so that every j is equally
    likely. No library RNG is involved, so a client can verify a deal without this code.
    """
    cards = list(deck)
    words: tuple[int, ...] = ()
    used = 0
    counter = 0
    for i in range(len(cards) - 1, 0, -1):
        bound = i + 1
        limit = _WORD_SPAN - _WORD_SPAN % bound
        while True:
            if used == len(words):  # the next digest's four words (a loop, not a generator: hot)
                words = _WORDS.unpack(hashlib.sha256(seed + counter.to_bytes(8, "big")).digest())
                counter += 1
                used = 0
            word = words[used]
            used += 1
            if word < limit:
                break
        j = word % bound
        cards[i], cards[j] = cards[j], cards[i]
    return tuple(cards)


_WORD_SPAN: Final = 1 << 64
_WORDS: Final = struct.Struct(">4Q")  # a SHA-256 digest as four 64-bit big-endian words
