"""`meldstream conformance`: answer rule-vector cases (JSON Lines on stdin) with the engine.

Format: tools/conformance/vectors/FORMAT.md (docs/conformance.md). One answer line per case; a case
the engine cannot decide answers {"id": ..., "error": ...} instead of a guess.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rummy_rules.conformance import answer


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "conformance",
        help="answer rule-vector cases read as JSON Lines on stdin",
        description="Read rule-vector cases, one JSON object a line, on stdin and print the engine's "
        'answer to each on stdout (a case it cannot decide: {"id": ..., "error": ...}). Example: '
        "meldstream conformance < vectors.jsonl",
    )
    parser.set_defaults(handler=run)


def run(_args: argparse.Namespace) -> int:
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            case = json.loads(line)
        except json.JSONDecodeError as exc:
            print(json.dumps({"id": None, "error": f"not JSON: {exc}"}), flush=True)
            continue
        print(json.dumps(answer(case)), flush=True)
    return 0
