"""A client generated from the newest released protos (protos/releases.txt) plays a short game of every
variant on today's engine: what buf breaking checks on the schema (make lint), checked on the wire.

The release's protos are read from git history (its commit), generated into a temporary directory
with the same protoc as the build, and a separate process imports only that code.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from rummy_contracts.house import house_bots
from rummy_identity.testing import IdentityProcess
from rummy_infra.serving import ServiceProcess
from rummy_rules.variants import PLAYABLE_VARIANTS

ROOT = Path(__file__).resolve().parents[2]
CLIENT = Path(__file__).with_name("released_client.py")
# Short games: one deal where the variant allows it (contract: its last round only).
OPTIONS = {
    "kalooki": [],
    "rummy40": ["deals_per_match=1"],
    "rummy500": ["target_score=100"],
    "contract": ["first_round=8", "last_round=8"],
}


def newest_release() -> tuple[str, str]:
    lines = (ROOT / "protos" / "releases.txt").read_text().splitlines()
    version, commit, *_ = [line for line in lines if line and not line.startswith("#")][-1].split()
    return version, commit


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Python generated from the release's protos/, and nothing else."""
    _, commit = newest_release()
    root = tmp_path_factory.mktemp("released")
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, "protos"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    protos = sorted(str(p.relative_to(root / "protos")) for p in (root / "protos" / "rummy").rglob("*.proto"))
    out = root / "gen"
    out.mkdir()
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", "-I", "protos", f"--python_out={out}",
         f"--grpc_python_out={out}", *protos],
        cwd=root, check=True,
    )  # fmt: skip
    return out


@pytest.mark.parametrize("variant", sorted(PLAYABLE_VARIANTS))
def test_a_client_of_the_released_protos_plays_today_s_engine(
    released: Path, embedded_engine: ServiceProcess, identity: IdentityProcess, variant: str
) -> None:
    ann = identity.player("compat-ann")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(released), os.environ.get("PYTHONPATH", "")]),
        "RELEASED_PROTOS": str(released),
        "MELDSTREAM_TOKEN": ann.token(),
    }
    players = ",".join([ann.id, *house_bots(2)])
    command = [sys.executable, str(CLIENT), embedded_engine.address, variant, players, *OPTIONS[variant]]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    assert done.stdout.startswith("ended compat-"), done.stdout
    print(variant, done.stdout.strip())
