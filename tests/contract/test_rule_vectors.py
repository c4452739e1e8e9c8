"""The rule vectors shipped in the repository, checked as a third party checks its own engine: the
checker (tools/conformance/check_vectors.py) drives `meldstream conformance` over every file, and a
driver that answers wrongly fails it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECKER = ROOT / "tools" / "conformance" / "check_vectors.py"
VECTORS = sorted((ROOT / "tools" / "conformance" / "vectors").glob("*.jsonl"))
DRIVER = f"{sys.executable} -m meldstream_cli.main conformance"


def check(driver: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(CHECKER), "--driver", driver, "-q", *map(str, VECTORS)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)


def test_every_public_vector_passes_through_the_cli_driver() -> None:
    assert [path.stem for path in VECTORS] == ["contract", "kalooki", "rummy40", "rummy500"]
    cases = sum(1 for path in VECTORS for line in path.read_text(encoding="utf-8").splitlines() if line)
    done = check(DRIVER)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == f"{cases} passed, 0 failed"


def test_a_driver_that_answers_nothing_fails_every_case() -> None:
    done = check(f"{sys.executable} -c pass")
    assert done.returncode == 1
    assert re.fullmatch(r"0 passed, \d+ failed", done.stdout.splitlines()[-1]), done.stdout
