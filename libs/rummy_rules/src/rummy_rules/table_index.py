"""The table index: every single-card layoff and joker swap the table's melds offer, kept while the
table is unchanged and updated meld by meld when it changes."""

from __future__ import annotations

from rummy_rules.cards import Card
from rummy_rules.melds import End, Meld, MeldOptions, meld_options
from rummy_rules.rules import Rules

_Target = tuple[int, End | None]  # a layoff of one card: meld index, end


class TableIndex:
    """Each table meld's `meld_options` (its layoffs and swaps), in table order.

    A changed table redoes only the melds that changed; nothing is copied per layoff, so an update
    costs a lookup per meld. `swaps` (every joker swap with its meld's index) and `layoff_cards`
    (the cards some meld takes) are built when first asked; `layoffs_of` lists one card's layoffs
    in table order, for rummy500 pile picks.
    """

    __slots__ = ("_layoff_cards", "_swaps", "options")

    def __init__(self, options: tuple[MeldOptions, ...]) -> None:
        self.options = options
        self._swaps: tuple[tuple[int, tuple[Card, ...]], ...] | None = None
        self._layoff_cards: frozenset[Card] | None = None

    def swaps(self) -> tuple[tuple[int, tuple[Card, ...]], ...]:
        swaps = self._swaps
        if swaps is None:
            swaps = tuple(
                [
                    (meld_index, cards)
                    for meld_index, entry in enumerate(self.options)
                    for cards in entry.swaps
                ]
            )
            self._swaps = swaps  # a race builds the same tuple twice; either is right
        return swaps

    def layoff_cards(self) -> frozenset[Card]:
        cards = self._layoff_cards
        if cards is None:
            cards = frozenset().union(*[entry.cards for entry in self.options])
            self._layoff_cards = cards  # a race builds the same set twice; either is right
        return cards

    def layoffs_of(self, card: Card) -> list[_Target]:
        return [
            (meld_index, at)
            for meld_index, entry in enumerate(self.options)
            if card in entry.cards
            for fit, at, _ in entry.layoffs
            if fit is card
        ]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TableIndex) and self.options == other.options

    __hash__ = None  # type: ignore[assignment]  # compared by content, never a key


_LAST_INDEX: list[tuple[tuple[Meld, ...], Rules, TableIndex] | None] = [None]


def table_index(melds: tuple[Meld, ...], rules: Rules) -> TableIndex:
    """`TableIndex` of `melds`, kept while the table is unchanged and updated when it changes.

    The table tuple survives `evolve` until a meld changes, so identity is a cheap, exact key; the
    entry is read and replaced as one object, so threads never mix two tables. A meld's options
    depend only on the meld and the rules: those of melds still at their place are reused (play
    appends melds or replaces one; a hypothetical table in `_joker_uses` differs in one), and the
    changed melds' options are memoised per meld (`meld_options`).
    """
    entry = _LAST_INDEX[0]
    if entry is None or entry[1] is not rules:
        index = full_index(melds, rules)
    elif entry[0] is melds:
        return entry[2]
    else:
        old, kept = entry[0], entry[2].options
        count = len(old)
        index = TableIndex(
            tuple(
                [
                    kept[i] if i < count and old[i] is meld else meld_options(meld, rules)
                    for i, meld in enumerate(melds)
                ]
            )
        )
    _LAST_INDEX[0] = (melds, rules, index)
    return index


def full_index(melds: tuple[Meld, ...], rules: Rules) -> TableIndex:
    return TableIndex(tuple([meld_options(meld, rules) for meld in melds]))
