"""The Go client (clients/go), built once for every test of this folder that runs it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GO_CLIENT = ROOT / ".local" / "bin" / "meldstream-go"


@pytest.fixture(scope="session")
def go_built() -> Path:
    """Built as `make test` builds it (clients/go/build.sh: code generated from protos/, then go build),
    once a session: each build regenerates the code, several seconds even with nothing changed."""
    built = subprocess.run(
        [ROOT / "clients" / "go" / "build.sh"], capture_output=True, text=True, timeout=600, check=False
    )
    assert built.returncode == 0, built.stderr
    return GO_CLIENT
