"""What a source file imports, for the structure tests that keep one package out of another."""

from __future__ import annotations

import ast
from collections.abc import Collection


def imported(source: str) -> list[tuple[int, str]]:
    """Each absolute import of `source` as its line and dotted name; `from a import b` is `a.b` (a
    module of `a` or a name defined in it: a file read, never run, cannot tell which)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return sorted(found)


def importing(source: str, packages: Collection[str]) -> list[int]:
    """Lines of `source` with an absolute import of any of the top-level `packages`."""
    return sorted({line for line, name in imported(source) if name.split(".")[0] in packages})
