"""The rules package imports only downward: no module reaches, directly or through others, a module
that imports it, counting imports made for type checking only and inside functions. A circle is how
a low layer (cards, state) comes to depend on a high one (turns, bots), so a change anywhere touches
everything; README.md's "Layers" says what sits where."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "rummy_rules"


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports() -> dict[str, set[str]]:
    """Each module of the package -> the modules of the package it imports, wherever the import is."""
    modules = {_module(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            graph[name] |= {target for target in targets if target in modules and target != name}
    return graph


def circle(graph: dict[str, set[str]]) -> list[str]:
    """One import circle of `graph`, as the modules around it, or [] when there is none."""
    done: set[str] = set()
    path: list[str] = []

    def visit(name: str) -> list[str]:
        if name in path:
            return [*path[path.index(name) :], name]
        if name in done:
            return []
        path.append(name)
        for target in sorted(graph[name]):
            found = visit(target)
            if found:
                return found
        path.pop()
        done.add(name)
        return []

    for name in sorted(graph):
        found = visit(name)
        if found:
            return found
    return []


def test_no_module_of_the_rules_imports_itself_through_others() -> None:
    graph = imports()
    assert len(graph) > 30 and graph["rummy_rules.turn"]  # the walk sees the package
    found = circle(graph)
    assert not found, " -> ".join(found)


def test_a_circle_is_found_when_there_is_one() -> None:
    graph = imports()
    graph["rummy_rules.cards"].add("rummy_rules.turn")  # cards asking the turn's code: a circle
    assert circle(graph)[0] == circle(graph)[-1]
