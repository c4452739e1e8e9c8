"""Rummy 500 rules that need no game state: deep picks from the spread pile, credit, scores, game end.

The game (`game.py`) and the conformance driver both use these, so a vector and a live game are
judged by the same code. Values come from the variant's `Rules` (ace 15, low-end ace 1, rummy500 D3).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar

from rummy_rules.cards import Card
from rummy_rules.errors import RuleViolation
from rummy_rules.melds import SET, Meld, hand_penalty, meld_value
from rummy_rules.rules import Rules

K = TypeVar("K")


def pile_pick(pile: Sequence[Card], index: int) -> tuple[Card, ...]:
    """The cards a deep pick at `index` (0 = bottom) takes: that card and every card above it.

    rummy500 §3.6.1 src ¶17: the selected card comes with everything above it, bottom to top.
    """
    if type(index) is not int or not 0 <= index < len(pile):
        raise RuleViolation(
            "no_such_pile_card",
            f"the discard pile has {len(pile)} cards; there is no position {index!r}",
            "rummy500 §3.6.1 src ¶17",
        )
    return tuple(pile[index:])


def card_credits(meld: Meld, rules: Rules) -> tuple[int, ...]:
    """The points each card of a table meld is worth, aligned with `meld.cards` (rummy500 D3, D16).

    A run card is valued at its position (an ace at the low end 1, at the high end 15); every card
    of a set is worth the set's rank value (aces 15).
    """
    return _credits(meld, rules, _position_values(rules))


def _position_values(rules: Rules) -> tuple[int, ...]:
    return (0, rules.ace_low_value, *range(2, 11), 10, 10, 10, rules.ace_high_value)


def _credits(meld: Meld, rules: Rules, positions: tuple[int, ...]) -> tuple[int, ...]:
    if meld.kind is SET:
        each = rules.ace_set_value if meld.rank == 1 else min(meld.rank, 10)
        return (each,) * len(meld.cards)
    return positions[meld.rank : meld.rank + len(meld.cards)]


def layoff_credit(before: Meld, after: Meld, rules: Rules) -> int:
    """Points credited to whoever laid cards off, turning table meld `before` into `after` (D12, D16)."""
    return meld_value(after, rules) - meld_value(before, rules)


def credited_points(
    melds: Iterable[Meld], credit_seats: Iterable[Sequence[int]], players: int, rules: Rules
) -> list[int]:
    """Value of the table cards credited to each seat: what it melded plus what it laid off (D12)."""
    totals = [0] * players
    positions = _position_values(rules)
    for meld, seats in zip(melds, credit_seats, strict=True):
        for value, owner in zip(_credits(meld, rules, positions), seats, strict=True):
            totals[owner] += value
    return totals


def deal_score(credited: int, hand: Sequence[Card], rules: Rules) -> int:
    """A player's score for a deal: credited table value minus the value left in hand (§3.9, src ¶9)."""
    return credited - hand_penalty(hand, rules)


def game_winner(scores: Mapping[K, int], target: int) -> K | None:
    """The winner after a deal, or None to play on (§3.10, src ¶11, D13).

    Someone must have reached `target`; the highest score wins, and a shared highest score means
    another deal.
    """
    if not scores:
        raise RuleViolation("no_players", "a game needs scores to judge", "rummy500 §3.10")
    best = max(scores.values())
    if best < target:
        return None
    leaders = [player for player, score in scores.items() if score == best]
    return leaders[0] if len(leaders) == 1 else None


def settlement(scores: Mapping[K, int], winner: K) -> dict[K, int]:
    """What each opponent pays the winner: the difference of the final scores (src ¶11, D14)."""
    if winner not in scores:
        raise RuleViolation("bad_winner", f"{winner!r} has no score", "rummy500 D14")
    top = scores[winner]
    return {player: top - score for player, score in scores.items() if player != winner}
