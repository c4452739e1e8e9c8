"""Answers rule-vector cases (../shared/rules/vectors/FORMAT.md) from the engine's own functions."""

from __future__ import annotations

from typing import Any


def answer(case: dict[str, Any]) -> dict[str, Any]:
    """Answer one case; a case the engine cannot decide yet gets an error, never a guess."""
    return {
        "id": case.get("id"),
        "error": f"kind {case.get('kind')!r} of {case.get('variant')!r} not implemented yet",
    }
