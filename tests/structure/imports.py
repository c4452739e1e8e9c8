"""What a source file imports, for the structure tests that keep one package out of another."""

from __future__ import annotations

import ast
from collections.abc import Collection


def importing(source: str, packages: Collection[str]) -> list[int]:
    """Lines of `source` with an absolute import of any of the top-level `packages`."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            continue
        if any(module.split(".")[0] in packages for module in modules):
            lines.append(node.lineno)
    return lines
