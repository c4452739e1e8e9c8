#!/usr/bin/env python3
"""Check a rules engine against rule vectors (format: vectors/FORMAT.md, beside this file).

The driver is any command that reads cases as JSON Lines on stdin, with the expected
outputs removed, and writes one JSON object per case on stdout: {"id": ..., <outputs>}.
A driver that cannot answer a case writes {"id": ..., "error": "why"}.

    tools/conformance/check_vectors.py --driver "meldstream conformance" tools/conformance/vectors/*.jsonl

Exit status 0 when every case passes; the last line is "N passed, M failed".
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from collections import Counter
from typing import Any

# Fields each kind must answer; everything else in a case is input.
OUTPUTS: dict[str, tuple[str, ...]] = {
    "meld": ("valid", "value"),
    "initial_meld": ("valid", "value"),
    "layoff": ("valid", "result", "credit"),
    "joker_swap": ("valid", "freed", "result"),
    "hand_penalty": ("penalty",),
    "going_out": ("valid", "kalooki"),
    "prize_split": ("result",),
    "match_result": ("winners",),
    "score": ("score",),
    "discard_draw": ("valid", "taken"),
    "game_end": ("winner", "settlement"),
    "contract": ("valid",),
    "buy": ("valid", "penalty", "cards_received"),
    "buy_dispute": ("winner",),
    "table_rotation": ("result",),
}
NOT_INPUT = ("rule", "note")


def question(case: dict[str, Any]) -> dict[str, Any]:
    hidden = set(OUTPUTS[case["kind"]]) | set(NOT_INPUT)
    return {k: v for k, v in case.items() if k not in hidden}


def is_set(cards: list[Any]) -> bool:
    ranks = {c[:-1] for c in cards if isinstance(c, str) and c != "JK"}
    return len(ranks) == 1


def same(expected: object, got: object) -> bool:
    if expected == got:
        return True
    if isinstance(expected, list) and isinstance(got, list) and all(isinstance(c, str) for c in expected):
        return is_set(expected) and Counter(expected) == Counter(got)
    return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--driver", required=True, help="command that answers cases")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("-q", "--quiet", action="store_true", help="print only the summary")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()

    cases = []
    for path in args.files:
        with open(path, encoding="utf-8") as fh:
            cases += [json.loads(line) for line in fh if line.strip()]
    stdin = "".join(json.dumps(question(c)) + "\n" for c in cases)
    try:
        proc = subprocess.run(
            shlex.split(args.driver),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=args.timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        print(f"driver did not run: {exc}")
        print(f"0 passed, {len(cases)} failed")
        return 1
    answers = {}
    for line in proc.stdout.splitlines():
        if line.strip():
            try:
                ans = json.loads(line)
                answers[ans.get("id")] = ans
            except json.JSONDecodeError:
                pass
    passed = failed = 0
    by_variant: Counter[str] = Counter()
    for case in cases:
        ans = answers.get(case["id"])
        wrong = []
        if ans is None:
            wrong.append("no answer")
        elif "error" in ans:
            wrong.append(f"error: {ans['error']}")
        else:
            for field in OUTPUTS[case["kind"]]:
                if field in case and not same(case[field], ans.get(field)):
                    wrong.append(f"{field}: expected {case[field]!r}, got {ans.get(field)!r}")
        if wrong:
            failed += 1
            by_variant[case["variant"]] += 1
            if not args.quiet:
                print(f"FAIL {case['id']} ({case.get('rule', '')}): " + "; ".join(wrong))
        else:
            passed += 1
    if proc.returncode != 0 and not args.quiet:
        print(f"driver exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    if by_variant:
        print("failures by variant: " + ", ".join(f"{k} {v}" for k, v in sorted(by_variant.items())))
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and proc.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
