"""The web replay export reads a finished game from GetHistory: an event of another event format is
refused (`OtherEventFormat`), never folded as if it were this build's."""

from __future__ import annotations

import hashlib

import pytest
from meldstream_web.export import history_export
from rummy.game.v1 import game_service_pb2 as gs
from rummy_contracts.event_format import SCHEMA_VERSION, OtherEventFormat, envelope
from rummy_contracts.facts import TableSeated
from rummy_rules import bots
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
