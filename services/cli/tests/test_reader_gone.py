"""A reader that goes away (`meldstream ... | head`) ends the command quietly: status 141, as a shell
reports `cat` in its place, and nothing on stderr (it was a BrokenPipeError)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

VECTORS = Path(__file__).parents[3] / "tools" / "conformance" / "vectors" / "kalooki.jsonl"


def reader_gone(command: list[str], stdin: bytes = b"") -> tuple[int, str]:
    """`meldstream COMMAND` with its stdout's reader gone before it writes; its status and stderr."""
    with subprocess.Popen(
        [sys.executable, "-m", "meldstream_cli.main", *command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stdout is not None
        process.stdout.close()  # before its imports are done: every write it makes finds no reader
        _, stderr = process.communicate(stdin, timeout=60)
    return process.returncode, stderr.decode()


def test_conformance_with_its_reader_gone_stops_quietly() -> None:
    assert reader_gone(["conformance"], VECTORS.read_bytes()) == (141, "")
