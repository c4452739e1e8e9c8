"""What matchmaking tells operators: queue sizes, waits to a seat and tables formed (Prometheus), and one
log line per table formed with its game and players' ids.

Labels are variants and the kind of table (queue or tournament), never a ticket or a player.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Final

from prometheus_client import Counter, Gauge, Histogram

log = logging.getLogger("rummy_matchmaking")

QUEUED: Final = Gauge(
    "rummy_matchmaking_queued_tickets",
    "Tickets waiting in this instance's queues, by variant (updated every pairing round)",
    ["variant"],
)
WAIT_SECONDS: Final = Histogram(
    "rummy_matchmaking_wait_seconds",
    "From a ticket queued to its table formed, by variant",
    ["variant"],
    buckets=(0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0),
)
TABLES_FORMED: Final = Counter(
    "rummy_matchmaking_tables_formed",
    "Tables published (TableFormed), by variant and kind: queue or tournament",
    ["variant", "kind"],
)
_variants: set[str] = set()  # every variant queued so far: a queue that empties reads 0, not its last size


def queues(variants: Iterable[str]) -> None:
    """The queues now: one variant per queued ticket."""
    counts: dict[str, int] = {}
    for variant in variants:
        counts[variant] = counts.get(variant, 0) + 1
    _variants.update(counts)
    for variant in _variants:
        QUEUED.labels(variant).set(counts.get(variant, 0))


def table_formed(game_id: str, variant: str, players: Sequence[str], waits: Sequence[float]) -> None:
    """A queue's table: counted, its tickets' waits observed, one line logged."""
    TABLES_FORMED.labels(variant, "queue").inc()
    histogram = WAIT_SECONDS.labels(variant)
    for wait in waits:
        histogram.observe(wait)
    facts = {"game_id": game_id, "variant": variant, "players": players, "waited_s": round(max(waits), 1)}
    log.info("table formed", extra=facts)


def tournament_table(
    game_id: str, variant: str, players: Sequence[str], tournament_id: str, round_number: int
) -> None:
    TABLES_FORMED.labels(variant, "tournament").inc()
    facts = {"game_id": game_id, "variant": variant, "players": players, "tournament_id": tournament_id}
    log.info("table formed", extra={**facts, "round": round_number})


def private_table(game_id: str, variant: str, players: Sequence[str]) -> None:
    """A private table's game (its seats filled, or a rematch accepted by all): counted, logged."""
    TABLES_FORMED.labels(variant, "private").inc()
    log.info("private table formed", extra={"game_id": game_id, "variant": variant, "players": players})
