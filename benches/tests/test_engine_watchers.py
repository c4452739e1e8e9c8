"""bench-engine's spectator phase runs end to end (on the embedded store) and says how streams ended."""

from __future__ import annotations

import pytest
from meldstream_benches import engine


@pytest.mark.slow
def test_the_spectator_phase_counts_views_and_endings(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--store", "embedded", "--games", "2", "--seconds", "3", "--bot", "random"]
    assert engine.main([*argv, "--watchers", "30", "--watch-games", "2"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("WatchGame"))
    assert row.startswith("WatchGame, 30 spectators at once on 2 games: first view p50"), row
    parts = (part.rsplit(": ", 1) for part in row.split("streams: ", 1)[1].split("; "))
    endings = {how: int(count) for how, count in parts}
    assert sum(endings.values()) == 30, row
    assert all(how.startswith(("view", "no view")) for how in endings), row  # none ended by the server
