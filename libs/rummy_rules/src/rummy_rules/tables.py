"""Contract rummy with many players: forming tables and moving closers between rounds (§3.14, D19).

Pure functions over table assignments (table id -> players in seat order, clockwise), so
matchmaking can run a tournament while each table plays an ordinary game. Randomness comes only
from a given seed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import TypeVar

from rummy_rules.errors import RuleViolation

P = TypeVar("P")
T = TypeVar("T")

TABLE_MIN = 3
TABLE_MAX = 4


def table_sizes(players: int, split_from: int = 8) -> tuple[int, ...]:
    """Table sizes for `players`: one table below `split_from`, else ceil(N/4) tables of 3-4 (§3.14.1).

    Sizes are as equal as possible, larger tables first. Refused when no split into tables of 3-4
    exists (5 players with option `split_from_players` = 5).
    """
    if type(players) is not int or players < 2:
        raise RuleViolation(
            "bad_player_count", f"contract needs at least 2 players, not {players!r}", "contract §3.1"
        )
    if players < split_from:
        if players > 7:
            raise RuleViolation("bad_player_count", "one table seats at most 7 players", "contract §3.1 D19")
        return (players,)
    count = -(-players // TABLE_MAX)
    if players < TABLE_MIN * count:
        raise RuleViolation(
            "cannot_split", f"{players} players cannot be split into tables of 3 to 4", "contract §3.14.1 D19"
        )
    base, extra = divmod(players, count)
    return tuple(base + 1 if index < extra else base for index in range(count))


def form_tables(players: Sequence[P], seed: bytes, split_from: int = 8) -> tuple[tuple[P, ...], ...]:
    """Seat `players` at tables by a seeded draw (§3.14.1, src ¶6-¶7): table order = rotation order."""
    if len(set(players)) != len(players):
        raise RuleViolation("duplicate_player", "every player is seated once", "contract §3.14.1")
    sizes = table_sizes(len(players), split_from)
    order = sorted(
        range(len(players)),
        key=lambda index: hashlib.sha256(seed + b"/seat/" + index.to_bytes(4, "big")).digest(),
    )
    drawn = [players[index] for index in order]
    tables: list[tuple[P, ...]] = []
    for size in sizes:
        tables.append(tuple(drawn[:size]))
        drawn = drawn[size:]
    return tuple(tables)


def fallback_mover(seats: Sequence[P], round_scores: Mapping[P, int], dealer_seat: int) -> P:
    """Who moves from a table whose round had no closer: the lowest round score (§3.14.3 D19).

    Ties go to the first of the tied players clockwise from the dealer, starting at the dealer's left.
    """
    if not 0 <= dealer_seat < len(seats):
        raise RuleViolation(
            "bad_seat", f"no dealer seat {dealer_seat} at a table of {len(seats)}", "contract §3.14.4"
        )
    missing = [player for player in seats if player not in round_scores]
    if missing:
        raise RuleViolation("missing_scores", f"no round score for {missing}", "contract §3.14.3 D19")
    best = min(round_scores[player] for player in seats)
    count = len(seats)
    for step in range(1, count + 1):
        player = seats[(dealer_seat + step) % count]
        if round_scores[player] == best:
            return player
    raise AssertionError("unreachable: some player has the lowest score")


def rotate_tables(
    tables: Mapping[T, Sequence[P]],
    closers: Mapping[T, P | None],
    round_scores: Mapping[P, int] | None = None,
    dealer_seats: Mapping[T, int] | None = None,
) -> dict[T, list[P]]:
    """Tables after a round: each table's mover goes to the next table, taking the seat its mover left.

    The mover is the table's closer, or without one the fallback mover (which needs the round scores
    and each table's dealer seat). All moves happen at once; the last table sends to the first
    (§3.14.3, src ¶8, D19). With a single table nobody moves.
    """
    order = list(tables)
    movers: list[P] = []
    seats: list[int] = []
    for table in order:
        players = list(tables[table])
        closer = closers.get(table)
        if closer is None:
            if round_scores is None or dealer_seats is None or table not in dealer_seats:
                raise RuleViolation(
                    "no_closer",
                    f"table {table!r} has no closer; its round scores and dealer seat pick who moves",
                    "contract §3.14.3 D19",
                )
            closer = fallback_mover(players, round_scores, dealer_seats[table])
        if closer not in players:
            raise RuleViolation(
                "bad_closer", f"{closer!r} does not sit at table {table!r}", "contract §3.14.3"
            )
        movers.append(closer)
        seats.append(players.index(closer))
    result = {table: list(tables[table]) for table in order}
    for index, table in enumerate(order):
        source = order[index - 1]  # the previous table's mover arrives here
        result[table][seats[index]] = movers[order.index(source)]
    return result


def next_dealer_seat(previous_seat: int, table_size: int) -> int:
    """The deal passes to the seat left of the previous dealer's seat, whoever sits there (§3.14.4)."""
    return (previous_seat + 1) % table_size
