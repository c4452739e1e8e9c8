"""Only a game matchmaking formed as rated moves a rating: a table a player or an operator created,
or one matchmaking formed casual, is scored and never rated, whatever else its records say. A game
logged before accounts (no seat names) counts as it did then, under the account its players now have."""

from __future__ import annotations

import pytest
from rummy.game.v1 import events_pb2 as ev
from rummy_scoring.handlers import Handlers
from rummy_scoring.store import ScoreReader
from rummy_store.sqlite_kv import SqliteKV

from .test_handlers import _game, _record

NAMES = ["Alice", "Mallory"]


@pytest.mark.parametrize(
    ("requested_by", "rated", "names", "moves"),
    [
        ("matchmaking", True, NAMES, True),  # a rated queue's or a tournament's table
        ("matchmaking", False, NAMES, False),  # a casual queue's or a private table's
        ("uMallory", True, NAMES, False),  # a player's own table, whatever it claims
        ("uOps", False, NAMES, False),  # an operator's table
        ("matchmaking", False, [], True),  # before accounts: matchmaking's tables were all rated
        ("mallory", False, [], False),  # before accounts: a player's table is no longer counted
    ],
)
def test_a_game_moves_ratings_only_when_matchmaking_formed_it_rated(
    requested_by: str, rated: bool, names: list[str], moves: bool
) -> None:
    client = SqliteKV(":memory:")
    handlers, reader = Handlers(client, "t:"), ScoreReader(client, "t:")
    records = _game("g1", ["alice", "mallory"], [40, 0], 1)
    seated = ev.TableSeated(player_ids=["alice", "mallory"], requested_by=requested_by, rated=rated)
    seated.player_names.extend(names)
    records[1] = _record("g1", 2, ev.GameEvent(table_seated=seated), "engine/create")
    handlers.on_game_records(records)
    assert reader.match("g1") is not None  # scored either way: the result is public
    assert bool(reader.rating_history("kalooki", "alice")) is moves


def test_players_of_before_accounts_are_rated_under_the_accounts_they_were_given() -> None:
    client = SqliteKV(":memory:")
    aliases = {"alice": "u0a11ce", "mallory": "u0ma11"}
    handlers, reader = Handlers(client, "t:", aliases=aliases), ScoreReader(client, "t:")
    records = _game("old", ["alice", "mallory"], [40, 0], 1)
    seated = ev.TableSeated(player_ids=["alice", "mallory"], requested_by="matchmaking")
    records[1] = _record("old", 2, ev.GameEvent(table_seated=seated), "engine/create")
    handlers.on_game_records(records)
    assert reader.rating_history("kalooki", "u0a11ce") and not reader.rating_history("kalooki", "alice")
    match = reader.match("old")
    assert match is not None and list(match.player_ids) == ["u0a11ce", "u0ma11"]
