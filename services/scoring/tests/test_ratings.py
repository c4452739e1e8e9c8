"""A ladder keeps a player's rated games in log order, bounded by KEEP; the base counts what it dropped."""

from __future__ import annotations

from rummy_scoring.ratings import DEFAULT, KEEP, Ladder, Rating


def test_a_ladder_orders_games_by_the_log_and_keeps_the_last_keep() -> None:
    ladder = Ladder(DEFAULT, [])
    for n in range(KEEP + 3):
        assert ladder.find((n * 10, f"g{n}")) == (n, False)
        assert not ladder.put(n, (n * 10, f"g{n}"), Rating(20.0 + n, 8.0, n + 1), insert=True)  # the last
    assert ladder.find((30, "g3")) == (3, True) and ladder.find((30, "g2")) == (3, False)  # ties: game id
    assert not ladder.put(3, (30, "g3"), Rating(23.0, 8.0, 4), insert=False)  # the same rating: no change
    assert ladder.rewritten == 0
    assert ladder.put(3, (30, "g3"), Rating(23.5, 8.0, 4), insert=False)  # changed: the rest is rated again
    assert ladder.rewritten == 0 and ladder.after(3) == Rating(23.5, 8.0, 4)
    ladder = Ladder(ladder.base, ladder.games)  # as loaded again
    assert ladder.put(5, (45, "late"), Rating(1.0, 1.0, 6), insert=True) and ladder.rewritten == 5
    assert ladder.after(6) == Rating(25.0, 8.0, 7)  # the games after it count one more
    ladder.trim()
    assert len(ladder.games) == KEEP and ladder.base == Rating(23.5, 8.0, 4)  # four dropped
    assert ladder.current == Rating(20.0 + KEEP + 2, 8.0, KEEP + 4)
    assert ladder.find((0, "g0")) == (0, False)  # older than every kept game: it can only go first
    assert Ladder.loads(ladder.dumps()) == ladder
