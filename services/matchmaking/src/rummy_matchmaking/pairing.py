"""Rating-aware pairing: a pure function from the waiting tickets and the time to the tables to form.

Oldest ticket first (first come, first served): it takes the compatible tickets after it, oldest first,
whose rating is within the wider of the two tickets' windows; a window starts at `base_window` and
widens by `widen_per_s` per second waited, up to `max_window`. A table forms as soon as it reaches its
largest acceptable size, or at any acceptable size once its oldest ticket has waited `fill_after_s`.
Each ticket is used at most once per call, and a ticket is whole (a party sits together).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class PairingRules:
    """Per-variant pairing settings (ratings are openskill ordinals: new players start at 0)."""

    base_window: float = 3.0
    widen_per_s: float = 1.0
    max_window: float = 50.0
    fill_after_s: float = 5.0


@dataclass(frozen=True, slots=True)
class Ticket:
    """A queued player or party: table size range, rating (the party's mean), private code."""

    ticket_id: str
    variant: str
    players: tuple[str, ...]
    rating: float
    min_players: int
    max_players: int
    enqueued_at: float
    private_code: str = ""

    def window(self, rules: PairingRules, now: float) -> float:
        if self.private_code:
            return float("inf")  # a private table is chosen by code, not by rating
        waited = max(0.0, now - self.enqueued_at)
        return min(rules.max_window, rules.base_window + rules.widen_per_s * waited)


@dataclass(frozen=True, slots=True)
class FormedTable:
    """Tickets seated together, in seat order (each party contiguous)."""

    tickets: tuple[Ticket, ...]
    players: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "players", tuple(p for t in self.tickets for p in t.players))


def _compatible(a: Ticket, b: Ticket, low: int, high: int) -> bool:
    return (
        a.variant == b.variant
        and a.private_code == b.private_code
        and max(low, b.min_players) <= min(high, b.max_players)
    )


def form_tables(
    tickets: Iterable[Ticket], now: float, rules_for: dict[str, PairingRules] | None = None
) -> list[FormedTable]:
    """The tables to form now from `tickets` (any order; FIFO is by `enqueued_at`, then id)."""
    rules_for = rules_for or {}
    queue = sorted(tickets, key=lambda t: (t.enqueued_at, t.ticket_id))
    used: set[str] = set()
    tables: list[FormedTable] = []
    for anchor in queue:
        if anchor.ticket_id in used:
            continue
        rules = rules_for.get(anchor.variant, PairingRules())
        low, high = anchor.min_players, anchor.max_players
        chosen = [anchor]
        count = len(anchor.players)
        for other in queue:
            if count >= high:
                break
            if other.ticket_id in used or other is anchor or other.enqueued_at < anchor.enqueued_at:
                continue
            if not _compatible(anchor, other, low, high) or count + len(other.players) > min(
                high, other.max_players
            ):
                continue
            window = max(anchor.window(rules, now), other.window(rules, now))
            if any(abs(other.rating - member.rating) > window for member in chosen):
                continue
            chosen.append(other)
            count += len(other.players)
            low, high = max(low, other.min_players), min(high, other.max_players)
        full = count >= high
        waited_enough = now - anchor.enqueued_at >= rules.fill_after_s and count >= low
        if (full or waited_enough) and count >= low and _distinct(chosen):
            used.update(t.ticket_id for t in chosen)
            tables.append(FormedTable(tuple(chosen)))
    return tables


def _distinct(tickets: Sequence[Ticket]) -> bool:
    """Nobody twice at one table (the app also refuses a second live ticket for a player)."""
    players = [p for t in tickets for p in t.players]
    return len(players) == len(set(players))
