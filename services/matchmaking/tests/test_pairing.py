"""Pairing: rating windows that widen with waiting, FIFO within a window, parties, private codes."""

from __future__ import annotations

from rummy_matchmaking.pairing import FormedTable, PairingRules, Ticket, form_tables

RULES = {"kalooki": PairingRules(base_window=2.0, widen_per_s=1.0, max_window=10.0, fill_after_s=5.0)}


def ticket(
    tid: str,
    rating: float,
    *,
    at: float = 0.0,
    players: tuple[str, ...] = (),
    low: int = 3,
    high: int = 3,
    code: str = "",
) -> Ticket:
    return Ticket(tid, "kalooki", players or (f"player-{tid}",), rating, low, high, at, code)


def seated(tables: list[FormedTable]) -> list[list[str]]:
    return [[t.ticket_id for t in table.tickets] for table in tables]


def test_similar_ratings_sit_together_first() -> None:
    queue = [
        ticket("a", 0),
        ticket("b", 20),
        ticket("c", 1),
        ticket("d", 21),
        ticket("e", 2),
        ticket("f", 22),
    ]
    assert seated(form_tables(queue, now=0.0, rules_for=RULES)) == [["a", "c", "e"], ["b", "d", "f"]]


def test_window_widens_with_waiting_time() -> None:
    queue = [ticket("a", 0, at=0.0), ticket("b", 6, at=0.0), ticket("c", 7, at=0.0)]
    assert form_tables(queue, now=0.0, rules_for=RULES) == []
    assert form_tables(queue, now=4.0, rules_for=RULES) == []  # window 2 + 4 = 6: b, not yet c
    assert seated(form_tables(queue, now=5.0, rules_for=RULES)) == [["a", "b", "c"]]  # window 7


def test_first_come_first_served_within_a_window() -> None:
    queue = [
        ticket("late", 0, at=3.0),
        ticket("early", 0, at=1.0),
        ticket("mid", 0, at=2.0),
        ticket("first", 0, at=0.0),
    ]
    assert seated(form_tables(queue, now=3.0, rules_for=RULES)) == [["first", "early", "mid"]]


def test_a_party_sits_together_and_counts_its_seats() -> None:
    queue = [ticket("solo", 0, at=0.0), ticket("duo", 0, at=1.0, players=("x", "y"))]
    tables = form_tables(queue, now=1.0, rules_for=RULES)
    assert seated(tables) == [["solo", "duo"]] and tables[0].players == ("player-solo", "x", "y")


def test_a_range_fills_up_to_its_largest_size_or_waits_for_the_fill_time() -> None:
    queue = [ticket(t, 0, low=3, high=4) for t in "abc"]
    assert form_tables(queue, now=1.0, rules_for=RULES) == []  # 3 of up to 4: wait for a fourth ...
    assert seated(form_tables(queue, now=5.0, rules_for=RULES)) == [["a", "b", "c"]]  # ... until 5 s


def test_private_codes_only_meet_their_own_code_whatever_the_rating() -> None:
    queue = [
        ticket("a", 0, code="x"),
        ticket("b", 0),
        ticket("c", 40, code="x"),
        ticket("d", 0),
        ticket("e", -30, code="x"),
    ]
    assert seated(form_tables(queue, now=0.0, rules_for=RULES)) == [["a", "c", "e"]]


def test_nobody_is_seated_twice_in_one_pass() -> None:
    queue = [ticket(str(i), 0, at=float(i)) for i in range(10)]
    tables = form_tables(queue, now=10.0, rules_for=RULES)
    used = [t for table in tables for t in seated([table])[0]]
    assert len(used) == len(set(used)) == 9  # three tables; the tenth waits
