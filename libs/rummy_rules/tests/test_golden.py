"""The golden playthroughs (golden.py) replay exactly: same legal actions, choices, events and states."""

from __future__ import annotations

import itertools

import pytest

from .golden import TABLES, Table, path, playthrough


@pytest.mark.parametrize("table", TABLES, ids=lambda table: table.name)
def test_seeded_games_replay_the_golden_file_decision_by_decision(table: Table) -> None:
    expected = path(table).read_text().splitlines()
    for number, (want, got) in enumerate(itertools.zip_longest(expected, playthrough(table)), start=1):
        assert got == want, (
            f"{path(table).name} line {number} differs; if the change of behaviour is intended, "
            "rewrite with `.venv/bin/python libs/rummy_rules/tests/golden.py` and review the diff"
        )
