"""The platform on a store named by one URL (`--store`, MELDSTREAM_STORE), on both kinds: `meldstream run
--demo` plays a game through matchmaking and scoring there, and `meldstream replay` and `verify` read it
back from the same URL."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from meldstream_cli.main import main

from .demo_run import demo_output


def _demo_game(args: list[str], env: dict[str, str]) -> str:
    """Run the platform until the demo's first game is scored; that game's id."""
    out = demo_output(args, env)
    assert "leaderboard (wins, all time): 1." in out, out  # scored: scoring found the engine's log
    match = re.search(r"game (\S+) over after", out)
    assert match, out
    return match.group(1)


def _reads_back(game: str, options: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", game, *options]) == 0
    assert capsys.readouterr().out.endswith("verified\n")
    assert main(["replay", game, *options, "--to", "1"]) == 0
    assert re.search(r"^seq 1 +[\d:.]+  A game of ", capsys.readouterr().out, re.M)


def test_an_embedded_store_url_keeps_the_whole_platform_in_its_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "platform"
    url = f"sqlite:///{store}"
    env = {
        k: v for k, v in os.environ.items() if k not in ("KAFKA_BOOTSTRAP", "REDIS_URL", "MELDSTREAM_STORE")
    }
    game = _demo_game(["--store", url], env)
    assert {p.name for p in tmp_path.iterdir()} == {"platform"}  # nothing beside it
    files = {p.name for p in store.glob("*.sqlite")}
    assert {"events.sqlite", "snapshots.sqlite", "tables.sqlite", "scores.sqlite", "scoring.sqlite"} <= files
    _reads_back(game, ["--store", url], capsys)


@pytest.mark.integration
def test_a_kafka_store_url_in_the_environment_is_the_platforms_store(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"kafka://{kafka_bootstrap}?redis={redis_url}"
    topic = f"{unique_prefix}.rummy.game.events.v1"
    env = {k: v for k, v in os.environ.items() if k not in ("KAFKA_BOOTSTRAP", "REDIS_URL")}
    env |= {
        "MELDSTREAM_STORE": url,
        "MELDSTREAM_DEV": "1",
        "ENGINE_TOPIC": topic,
        "ENGINE_KEY_PREFIX": f"{unique_prefix}:engine:",
        "MATCHMAKING_TOPIC": f"{unique_prefix}.rummy.matchmaking.events.v1",
        "SCORING_TOPIC": f"{unique_prefix}.rummy.scoring.events.v1",
        "SCORING_KEY_PREFIX": f"{unique_prefix}:scoring:",
        "SCORING_GROUP": f"{unique_prefix}.scoring",
    }
    _reads_back(_demo_game([], env), ["--store", url, "--topic", topic], capsys)
