"""The public rule vectors (tools/conformance/vectors), answered by `conformance.answer` exactly as the
CLI driver does; tests/contract/test_rule_vectors.py runs the checker over the CLI itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rummy_rules.conformance import answer

VECTORS = Path(__file__).resolve().parents[3] / "tools" / "conformance" / "vectors"
OUTPUTS = ("valid", "value", "result", "freed", "penalty", "kalooki", "winners")


def cases(variant: str) -> list[dict[str, object]]:
    path = VECTORS / f"{variant}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _same(expected: object, got: object) -> bool:
    if isinstance(expected, list) and isinstance(got, list):
        return expected == got or sorted(map(str, expected)) == sorted(map(str, got))
    return expected == got


@pytest.mark.parametrize("case", cases("kalooki") + cases("rummy40"), ids=lambda case: str(case["id"]))
def test_public_vector(case: dict[str, object]) -> None:
    question = {key: value for key, value in case.items() if key not in (*OUTPUTS, "rule", "note")}
    got = answer(question)
    assert "error" not in got, got
    for field in OUTPUTS:
        if field in case:
            assert _same(case[field], got.get(field)), (field, case[field], got.get(field))


def test_kinds_a_variant_does_not_have_answer_an_error_not_a_guess() -> None:
    got = answer({"id": "x", "variant": "rummy500", "kind": "initial_meld", "melds": [["7H", "7S", "7D"]]})
    assert set(got) == {"id", "error"}


def test_malformed_card_answers_invalid_meld() -> None:
    assert (
        answer({"id": "x", "variant": "kalooki", "kind": "meld", "cards": ["1H", "2H", "3H"]})["valid"]
        is False
    )
