"""The table index: every single-card layoff and joker swap the table's melds offer, kept while the
table is unchanged and updated meld by meld when it changes."""

from __future__ import annotations

from rummy_rules.cards import Card
from rummy_rules.melds import End, Meld, meld_options
from rummy_rules.rules import Rules

_Layoff = tuple[int, Card, End | None, Meld]  # meld index, card, end, resulting meld
_Swap = tuple[int, Meld, tuple[Card, ...]]  # meld index, meld, the cards that free a joker


_Share = tuple[tuple[_Layoff, ...], tuple[_Swap, ...]]  # one table meld's part of the index


class TableIndex:
    """The table's single-card layoffs and joker swaps, in the order of a walk over the table.

    `layoffs` and `swaps` go meld by meld, each meld's in `meld_options` order; `shares` holds each
    meld's part, so a changed table redoes only the melds that changed. `by_card` (built when first
    asked) groups the layoffs by card, in the same order, for rummy500 pile picks.
    """

    __slots__ = ("_by_card", "layoffs", "shares", "swaps")

    def __init__(self, shares: tuple[_Share, ...]) -> None:
        self.shares = shares
        self.layoffs = tuple([layoff for share in shares for layoff in share[0]])
        self.swaps = tuple([swap for share in shares for swap in share[1]])
        self._by_card: dict[Card, list[_Layoff]] | None = None

    def by_card(self) -> dict[Card, list[_Layoff]]:
        by_card = self._by_card
        if by_card is None:
            by_card = {}
            for layoff in self.layoffs:
                by_card.setdefault(layoff[1], []).append(layoff)
            self._by_card = by_card  # a race builds the same dict twice; either is right
        return by_card

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TableIndex) and (self.layoffs, self.swaps) == (other.layoffs, other.swaps)

    __hash__ = None  # type: ignore[assignment]  # compared by content, never a key


_LAST_INDEX: list[tuple[tuple[Meld, ...], Rules, TableIndex] | None] = [None]


def table_index(melds: tuple[Meld, ...], rules: Rules) -> TableIndex:
    """`TableIndex` of `melds`, kept while the table is unchanged and updated when it changes.

    The table tuple survives `evolve` until a meld changes, so identity is a cheap, exact key; the
    entry is read and replaced as one object, so threads never mix two tables. A meld's share
    depends only on its place, the meld and the rules: shares of melds still at their place are
    reused (play appends melds or replaces one; a hypothetical table in `_joker_uses` differs
    in one), and the changed melds' options are memoised per meld (`meld_options`).
    """
    entry = _LAST_INDEX[0]
    if entry is None or entry[1] is not rules:
        index = full_index(melds, rules)
    elif entry[0] is melds:
        return entry[2]
    else:
        index = _updated_index(entry[0], entry[2], melds, rules)
    _LAST_INDEX[0] = (melds, rules, index)
    return index


def full_index(melds: tuple[Meld, ...], rules: Rules) -> TableIndex:
    return TableIndex(tuple(_meld_share(i, meld, rules) for i, meld in enumerate(melds)))


def _updated_index(
    old: tuple[Meld, ...], index: TableIndex, melds: tuple[Meld, ...], rules: Rules
) -> TableIndex:
    """The index of `melds` from that of `old`: the shares of melds still at their place are kept."""
    kept = len(old)
    shares = index.shares
    return TableIndex(
        tuple(
            shares[i] if i < kept and old[i] is meld else _meld_share(i, meld, rules)
            for i, meld in enumerate(melds)
        )
    )


def _meld_share(meld_index: int, meld: Meld, rules: Rules) -> _Share:
    options = meld_options(meld, rules)
    return (
        tuple((meld_index, card, at, result) for card, at, result in options.layoffs),
        tuple((meld_index, meld, cards) for cards in options.swaps),
    )
