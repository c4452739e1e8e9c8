"""What a source file imports, for the structure tests that keep one package out of another."""

from __future__ import annotations

import ast
from collections.abc import Collection


def imported(source: str) -> list[tuple[int, str]]:
    """Each import of `source` as its line and dotted name, wherever it is (under `if TYPE_CHECKING:`,
    inside a function); `from a import b` is `a.b` (a module of `a` or a name defined in it: a file
    read, never run, cannot tell which). A relative import keeps its dots: `from . import b` is `.b`,
    `from ..a import b` is `..a.b`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            base = "." * node.level + (f"{node.module}." if node.module else "")
            found += [(node.lineno, f"{base}{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return sorted(found)


def importing(source: str, packages: Collection[str]) -> list[int]:
    """Lines of `source` with an absolute import of any of the top-level `packages`."""
    return sorted({line for line, name in imported(source) if name.split(".")[0] in packages})
