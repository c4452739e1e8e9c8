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
    names: tuple[str, ...] = ()  # shown for `players` (their display names when queued)
    bots: tuple[bool, ...] = ()  # which of `players` are bot accounts
    casual: bool = False  # not rated: casual tickets sit apart from rated ones

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

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(n for t in self.tickets for n in (t.names or ("",) * len(t.players)))

    @property
    def bots(self) -> tuple[bool, ...]:
        return tuple(b for t in self.tickets for b in (t.bots or (False,) * len(t.players)))

    @property
    def rated(self) -> bool:
        return not any(t.casual for t in self.tickets)


def form_tables(
    tickets: Iterable[Ticket], now: float, rules_for: dict[str, PairingRules] | None = None
) -> list[FormedTable]:
    """The tables to form now from `tickets` (any order; FIFO is by `enqueued_at`, then id)."""
    rules_for = rules_for or {}
    buckets: dict[tuple[str, str, bool], list[Ticket]] = {}
    for ticket in sorted(tickets, key=lambda t: (t.enqueued_at, t.ticket_id)):
        buckets.setdefault((ticket.variant, ticket.private_code, ticket.casual), []).append(ticket)
    tables: list[FormedTable] = []
    for (variant, _, _), queue in buckets.items():
        tables.extend(_form(queue, now, rules_for.get(variant, PairingRules())))
    return tables


def _form(queue: Sequence[Ticket], now: float, rules: PairingRules) -> list[FormedTable]:
    """Tables from one variant's (and private code's) queue, oldest ticket first."""
    used = [False] * len(queue)
    windows = [t.window(rules, now) for t in queue]
    tables: list[FormedTable] = []
    for i, anchor in enumerate(queue):
        if used[i]:
            continue
        low, high = anchor.min_players, anchor.max_players
        chosen = [i]
        count = len(anchor.players)
        for j in range(i + 1, len(queue)):  # only tickets that came later: FIFO
            if count >= high:
                break
            other = queue[j]
            if used[j] or max(low, other.min_players) > min(high, other.max_players):
                continue
            if count + len(other.players) > min(high, other.max_players):
                continue
            window = max(windows[i], windows[j])
            if any(abs(other.rating - queue[k].rating) > window for k in chosen):
                continue
            chosen.append(j)
            count += len(other.players)
            low, high = max(low, other.min_players), min(high, other.max_players)
        members = [queue[k] for k in chosen]
        full = count >= high
        waited_enough = now - anchor.enqueued_at >= rules.fill_after_s
        if (full or waited_enough) and count >= low and _distinct(members):
            for k in chosen:
                used[k] = True
            tables.append(FormedTable(tuple(members)))
    return tables


def _distinct(tickets: Sequence[Ticket]) -> bool:
    """Nobody twice at one table (the app also refuses a second live ticket for a player)."""
    players = [p for t in tickets for p in t.players]
    return len(players) == len(set(players))
