"""Every environment variable the services read is in docs/operators/configuration.md, and the page
names no variable nothing reads: operators configure from that page, so a new setting needs its row.

Variables are read from the source of the services and of the libraries they run on: every string
constant that is a whole variable name of the platform's (`ENGINE_`, `MATCHMAKING_`, `SCORING_`, `IDENTITY_`,
`WEB_`, `KAFKA_`, `REDIS_`, `MELDSTREAM_`, `LOG_`, `TLS_`). The test harness's own (rummy_infra) are
for contributors (docs/contributing.md).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [
    *(ROOT / "libs" / name / "src" for name in ("rummy_service", "rummy_store", "rummy_client")),
    *sorted((ROOT / "services").glob("*/src")),
]
PAGE = ROOT / "docs" / "operators" / "configuration.md"
VARIABLE = re.compile(
    r"(?:ENGINE|MATCHMAKING|SCORING|IDENTITY|WEB|KAFKA|REDIS|MELDSTREAM|LOG|TLS)_[A-Z0-9_]*[A-Z0-9]"
)


def read() -> dict[str, str]:
    """Variable names in the source, with where each first appears."""
    found: dict[str, str] = {}
    for source in SOURCES:
        for path in sorted(source.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Constant)
                    and isinstance(node.value, str)
                    and VARIABLE.fullmatch(node.value)
                ):
                    found.setdefault(node.value, f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def documented() -> set[str]:
    """The variables in the first column of the page's tables."""
    names: set[str] = set()
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        if line.startswith("|"):
            first = line.strip("|").split("|")[0]
            names.update(name for name in re.findall(r"`([A-Z0-9_]+)`", first) if VARIABLE.fullmatch(name))
    return names


def test_the_source_is_read() -> None:
    assert {"ENGINE_SEED_KEY", "KAFKA_BOOTSTRAP", "MATCHMAKING_PAIRING", "WEB_BOT_PACE_MS"} <= set(read())


def test_every_variable_is_documented() -> None:
    missing = sorted(f"{where}: {name}" for name, where in read().items() if name not in documented())
    assert not missing, f"variables without a row in {PAGE.relative_to(ROOT)}:\n" + "\n".join(missing)


def test_no_variable_is_documented_that_nothing_reads() -> None:
    stale = sorted(documented() - set(read()))
    assert not stale, f"{PAGE.relative_to(ROOT)} documents variables nothing reads: {stale}"
