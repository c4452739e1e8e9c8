"""`meldstream replay`'s text reads as sentences (the log's, `rummy_contracts.sentences`): no field dumps
(`melds=3U`, `penalties`, `kalooki=False`, Python lists), melds numbered from 1 as the sentences number
them, the seed in hex in the summary, the export and `verify`, which numbers events as `replay` does."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from meldstream_cli.replay_text import (
    event_line,
    for_people,
    narrator,
    refused_line,
    summary_lines,
    table_lines,
)
from meldstream_cli.verify import from_file, report
from meldstream_web.export import history_export
from rummy.game.v1 import game_service_pb2 as gs
from rummy_contracts import event_format
from rummy_contracts.event_format import Logged
from rummy_contracts.facts import TableSeated
from rummy_rules import bots
from rummy_rules.simulate import simulate


def _doc(variant: str) -> dict[str, Any]:
    """A finished game of bots as its export, with its seating (seq 2) as the engine logs it."""
    seed = hashlib.sha256(variant.encode()).digest()
    options = {"target_score": 100} if variant == "rummy500" else {}
    game = simulate(variant, 2, seed, bots.greedy, options=options, max_decisions=3000)
    seated = TableSeated(("p-ann", "p-bo"), 0, (), "p-ann", player_names=("Ann", "Bo"))
    logged: list[Logged] = [game.events[0], seated, *game.events[1:]]
    history = gs.GetHistoryResponse(
        entries=[
            gs.HistoryEntry(event=event_format.envelope("g", seq, f"c{seq}", event, 1.8e9 + seq))
            for seq, event in enumerate(logged, start=1)
        ]
    )
    return history_export("g", history, seat=None)


@pytest.mark.parametrize("variant", ["rummy500", "kalooki"])
def test_the_replay_reads_as_sentences(
    variant: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _doc(variant)
    shown = for_people(doc, str)
    words = narrator(shown)
    lines = [event_line(words, entry) for entry in shown["events"]]
    tables = [line for entry in shown["events"] for line in table_lines(shown, entry)]
    text = "\n".join([*summary_lines(shown), *lines, *tables])
    assert not re.search(r"\w=|\{|\[|penalties|kalooki=|False|True", text), text
    assert re.search(
        r"^seq 2 +[\d:.]+  At the table: Ann and Bo\. (Ann|Bo) dealt deal 1\.$", "\n".join(lines), re.M
    )
    assert any("Deal scores: Ann " in line for line in lines) and "Game over: " in lines[-1]
    melds = [line for line in tables if line.lstrip().startswith("meld ")]
    assert melds and all(not line.lstrip().startswith("meld 0") for line in melds)
    if any("laid off" in line for line in lines):  # a layoff names a meld the table lists
        assert not any(re.search(r"on meld 0\b", line) for line in lines)
    seed = doc["summary"]["seed"]
    assert f"seed (hex): {seed}" in text
    ended = doc["events"][-1]
    assert ended["event"]["seed"] == seed  # the export's event: hex too

    path = tmp_path / "export.json"
    path.write_text(json.dumps(doc))
    assert report(from_file(path), str(path)) == 0
    out = capsys.readouterr().out
    assert f"seed (hex)      {seed}" in out
    # `verify` numbers each deal as `replay` does: the seq of its line.
    for name, seq in re.findall(r"^(deal \d+) +seq (\d+) ", out, re.M):
        line = lines[int(seq) - 1]
        assert line.startswith(f"seq {seq} ") and ("began" in line or "dealt" in line), (name, line)


def test_a_refusal_reads_as_the_move_sent() -> None:
    doc = {"summary": {"players": ["Ann", "Bo"]}}
    lay_off = {"meld": 1, "cards": [{"rank": 12, "suit": "SUIT_SPADES"}, {}], "at": "RUN_END_HIGH"}
    refusal = {
        "time": "2027-01-15T08:00:03.000Z",
        "after_seq": 2,
        "seat": 1,
        "player": "p-bo",
        "command_id": "c-1",
        "action": {"lay_off": lay_off},
        "code": "must_draw_first",
        "message": "draw first",
    }
    line = refused_line(doc, refusal)
    assert "'p-bo' sent lay_off meld 2 Q♠ joker at high (command 'c-1'): REFUSED must_draw_first" in line
