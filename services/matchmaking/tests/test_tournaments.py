"""Tournament rounds: seat draw, contract rotation of closers (§3.14, D19), series, refusals."""

from __future__ import annotations

import pytest
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy_matchmaking.tournaments import Tournament, TournamentError


def _result(
    players: tuple[str, ...], closer: str | None, penalties: list[int] | None = None
) -> sc.MatchScored:
    penalties = penalties or [0 if p == closer else 10 for p in players]
    return sc.MatchScored(
        variant="contract",
        player_ids=players,
        totals=penalties,
        closer=closer or "",
        last_deal_penalties=penalties,
    )


def _rotation(players: int, rounds: int = 2) -> Tournament:
    t = Tournament("t1", "contract", mm.TOURNAMENT_FORMAT_ROTATION, rounds, 0, {}, b"seed")
    for i in range(players):
        t.register(f"p{i}")
    return t


def test_closers_move_to_the_next_table_into_the_seat_left_free() -> None:
    t = _rotation(11)
    first = t.start()
    assert [len(table.players) for table in first] == [4, 4, 3]
    closers = [table.players[1] for table in first]
    assert t.record(first[0].game_id, _result(first[0].players, closers[0])) == []
    assert t.record(first[1].game_id, _result(first[1].players, closers[1])) == []
    second = t.record(first[2].game_id, _result(first[2].players, closers[2]))
    assert [table.round for table in second] == [2, 2, 2]
    for index, table in enumerate(second):
        expected = list(first[index].players)
        expected[1] = closers[index - 1]  # last table's closer goes to table 1
        assert list(table.players) == expected


def test_a_table_without_a_closer_sends_its_lowest_scorer() -> None:
    t = _rotation(8)
    first = t.start()
    t.record(first[0].game_id, _result(first[0].players, first[0].players[0]))
    low = first[1].players[2]
    penalties = [5 if p == low else 30 for p in first[1].players]
    second = t.record(first[1].game_id, _result(first[1].players, None, penalties))
    assert second[0].players[0] == low and second[1].players[2] == first[0].players[0]


def test_a_redelivered_result_changes_nothing_and_the_last_round_ends_it() -> None:
    t = _rotation(8, rounds=1)
    first = t.start()
    for table in first:
        assert t.record(table.game_id, _result(table.players, table.players[0])) == []
        assert t.record(table.game_id, _result(table.players, table.players[1])) == []
    assert t.finished and t.tables[0].result is not None and t.tables[0].result.closer == first[0].players[0]


def test_rotation_is_refused_below_eight_players_and_outside_contract() -> None:
    with pytest.raises(TournamentError, match="rotation needs 8"):
        _rotation(7).start()
    series = Tournament("t2", "kalooki", mm.TOURNAMENT_FORMAT_ROTATION, 1, 0, {}, b"s")
    with pytest.raises(TournamentError, match="contract"):
        series.start()


def test_series_keeps_its_tables_and_adds_up_standings() -> None:
    t = Tournament("t3", "kalooki", mm.TOURNAMENT_FORMAT_SERIES, 2, 3, {}, b"s")
    for name in "abcdef":
        t.register(name)
    with pytest.raises(TournamentError, match="already_registered"):
        t.register("a")
    first = t.start()
    assert [table.players for table in first] == [("a", "b", "c"), ("d", "e", "f")]
    t.record(first[0].game_id, sc.MatchScored(player_ids=first[0].players, totals=[0, 5, 9]))
    second = t.record(first[1].game_id, sc.MatchScored(player_ids=first[1].players, totals=[7, 0, 1]))
    assert [table.players for table in second] == [("a", "b", "c"), ("d", "e", "f")]
    assert t.standings()[:2] == [("a", 0), ("e", 0)]


def test_each_rotation_table_plays_its_round_alone_and_the_deal_passes_on() -> None:
    t = _rotation(8, rounds=3)
    first = t.start()
    # contract M2: tournament round k is contract round k alone; round 1's dealer is drawn per game
    assert t.options_for(first[0]) == {"first_round": 1, "last_round": 1}
    results = []
    for number, table in enumerate(first):
        result = _result(table.players, table.players[0])
        result.last_dealer = 3 - number  # table 1 dealt from seat 3, table 2 from seat 2
        results.append(result)
    t.record(first[0].game_id, results[0])
    second = t.record(first[1].game_id, results[1])
    # §3.14.4: the deal passes to the seat left of the table's last dealer, whoever sits there now
    assert [table.dealer for table in second] == [0, 3]
    assert t.options_for(second[1]) == {"first_round": 2, "last_round": 2, "first_dealer": 3}
    series = Tournament("t4", "kalooki", mm.TOURNAMENT_FORMAT_SERIES, 2, 3, {"prize_pool": 10}, b"s")
    assert series.options_for(first[0]) == {"prize_pool": 10}  # a series table plays whole matches
