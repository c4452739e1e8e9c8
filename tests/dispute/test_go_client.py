"""The Go client (clients/go) plays a game of every variant on a real engine process and re-derives
every deal from docs/shuffle.md alone: a second implementation of the published shuffle, in another
language, over the public API only."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from rummy_contracts.house import house_bots
from rummy_identity.testing import IdentityProcess
from rummy_infra.serving import ServiceProcess
from rummy_rules.variants import PLAYABLE_VARIANTS

ROOT = Path(__file__).resolve().parents[2]
SEATS = 3  # a person and two house bots, whose seats her client plays (as the web app's quick play)
# Options that keep each game short while still covering later deals and reshuffles: rummy40 plays two
# deals, rummy500 deals until 100 points, contract plays two early rounds (a first deal keyed 1 while
# numbered 2, then deal 3: the game's first deal is not deal 1). Not the last two: three runs, then two
# runs and two threes, take the bots several times as many moves to meet, for the same proof.
OPTIONS = {
    "kalooki": [],
    "rummy40": ["deals_per_match=2"],
    "rummy500": ["target_score=100"],
    "contract": ["first_round=2", "last_round=3"],
}


@pytest.fixture(scope="module")
def go_client(go_built: Path) -> Path:
    """The session's build (conftest.go_built), its own go test passed first."""
    tested = subprocess.run(
        ["go", "test", "./..."],
        cwd=ROOT / "clients" / "go",
        env={**os.environ, "GOTOOLCHAIN": "local"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr  # the doc's worked example, in Go
    return go_built


@pytest.mark.slow
@pytest.mark.parametrize("variant", sorted(PLAYABLE_VARIANTS))
def test_the_go_client_plays_and_verifies_every_deal(
    go_client: Path, embedded_engine: ServiceProcess, variant: str, identity: IdentityProcess
) -> None:
    ann = identity.player("go-ann")
    command = [
        str(go_client),
        f"-address={embedded_engine.address}",
        f"-variant={variant}",
        f"-players={','.join([ann.id, *house_bots(SEATS)])}",
        f"-tokens={','.join([ann.token()] * SEATS)}",
        "-timeout=240s",
        *(f"-option={option}" for option in OPTIONS[variant]),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    summary = re.search(rf"^verified \S+: {variant}, (\d+) deals, (\d+) reshuffles", done.stdout, re.M)
    assert summary, done.stdout[-3000:]
    deals = int(summary.group(1))
    # Every seat's dealt hand was checked for every deal, and the history's decks as well.
    for seat in range(SEATS):
        assert len(re.findall(rf"^ok +seat {seat}, seq \d+: the hand dealt", done.stdout, re.M)) == deals
    assert len(re.findall(r"^ok +history seq \d+: deal \d+'s deck", done.stdout, re.M)) == deals
    if variant in ("rummy40", "contract"):
        assert deals >= 2  # a void deal is dealt again
