"""The web replay export reads a finished game from GetHistory: an event of another event format is
refused (`OtherEventFormat`), never folded as if it were this build's."""

from __future__ import annotations

import hashlib

import pytest
from meldstream_web.export import history_export
from rummy.game.v1 import game_service_pb2 as gs
from rummy_contracts.event_format import SCHEMA_VERSION, Logged, OtherEventFormat, envelope
from rummy_contracts.facts import SeatDisconnected, SeatReconnected, TableSeated
from rummy_rules import bots
from rummy_rules.events import SeatForfeited
from rummy_rules.simulate import simulate


def _history(table_format: int) -> gs.GetHistoryResponse:
    """A game's first two events as GetHistory answers them, the second of format `table_format`."""
    started = simulate("rummy40", 2, hashlib.sha256(b"web").digest(), bots.greedy, max_decisions=1).events[0]
    first = envelope("g", 1, "engine/create", started, 0.0)
    second = envelope("g", 2, "engine/create", TableSeated(("ann", "bob"), 0, (), "ann"), 0.0)
    second.schema_version = table_format
    return gs.GetHistoryResponse(entries=[gs.HistoryEntry(event=first), gs.HistoryEntry(event=second)])


def test_a_history_of_this_format_is_exported() -> None:
    doc = history_export("g", _history(SCHEMA_VERSION), seat=None)
    assert [event["type"] for event in doc["events"]] == ["game_started", "table_seated"]


def test_a_history_holding_another_format_is_refused() -> None:
    with pytest.raises(OtherEventFormat, match=r"^game 'g' \(seq 2\) was written by a newer meldstream"):
        history_export("g", _history(SCHEMA_VERSION + 1), seat=None)


def test_a_disconnection_and_a_forfeit_are_in_the_summary() -> None:
    """meldstream M3: when a seat's player left, whether they came back, and the forfeit with its points."""
    game = simulate("rummy40", 2, hashlib.sha256(b"web").digest(), bots.greedy, max_decisions=2).events
    history = _history(SCHEMA_VERSION)
    events: list[Logged] = [
        SeatDisconnected(1, 30_000, 1_790_000_030_000, 3),
        SeatReconnected(1),
        game[1],
        SeatDisconnected(1, 30_000, 1_790_000_090_000, 3),
        SeatForfeited(1, 61),
    ]
    for seq, event in enumerate(events, 3):
        history.entries.append(
            gs.HistoryEntry(event=envelope("g", seq, f"engine/x/{seq}", event, 1_790_000.0))
        )
    summary = history_export("g", history, seat=None)["summary"]
    first, second = summary["disconnections"]
    assert (first["seat"], first["player"], first["from"]["seq"], first["to"]["seq"]) == (1, "bob", 3, 4)
    assert first["grace_ends_at"] == "2026-09-21T14:13:50.000Z" and first["grace_ms"] == 30_000
    assert second["to"] is None
    assert [(f["seat"], f["player"], f["seq"], f["points"]) for f in summary["forfeits"]] == [
        (1, "bob", 7, 61)
    ]
