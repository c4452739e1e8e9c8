"""issue 28, "one home": rummy_rules is in layers that import only downward. The layers are written
once, in the package's README ("## Layers", lowest first); this test reads them and the package's
sources (never runs them) and fails when a module imports from a layer above its own, when imports
go round a circle (within a layer too), or when a module is in no layer or in two. Every import
counts, those under `if TYPE_CHECKING:` and inside functions included: a circle dodged at run time
still ties a low module to a high one, so a change anywhere touches everything.
Each check is also run on a snippet that breaks it, so none passes by finding nothing.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from pathlib import Path

from .imports import imported

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "libs" / "rummy_rules"
PACKAGE = LIBRARY / "src" / "rummy_rules"

LAYER = re.compile(r"^(\d+)\. \*\*([^*]+)\*\*:")
NAMED = re.compile(r"`([\w.]+/?)`")


def _modules() -> dict[str, Path]:
    """The package's modules by dotted name (a package by its own name), each with its file."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported_modules(
    source: str, module: str, modules: Collection[str], *, package: bool = False
) -> dict[str, int]:
    """The `modules` that `source`, the text of the module named `module` (a package's __init__ when
    `package`), imports, each with the line of its first import; `from p import name` imports the
    module `p.name` when there is one, else `p`. Relative imports are resolved, so none slips past."""
    found: dict[str, int] = {}
    here = module.split(".") if package else module.split(".")[:-1]
    for line, written in imported(source):
        relative = written.lstrip(".")
        dots = len(written) - len(relative)
        name = ".".join([*here[: len(here) - dots + 1], relative]) if dots else written
        target = name if name in modules else name.rpartition(".")[0]
        if target in modules and target != module:
            found[target] = min(found.get(target, line), line)
    return found


def import_graph(modules: Mapping[str, Path]) -> dict[str, dict[str, int]]:
    """Each module -> the package's modules it imports, each with the line of the import."""
    names = set(modules)
    return {
        name: imported_modules(
            path.read_text(encoding="utf-8"), name, names, package=path.name == "__init__.py"
        )
        for name, path in modules.items()
    }


def layers(readme: str, modules: Collection[str]) -> tuple[dict[str, int], list[str]]:
    """The layer (1 = lowest) of each module as the README's "## Layers" list names it (`name`, or
    `folder/` for a subpackage and all in it), and what is wrong with the list: a module in no layer
    or in two, layers out of order."""
    root = next(iter(modules)).split(".")[0]  # the package's own name
    section = readme.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    items: list[tuple[int, str]] = []
    for line in section.splitlines():
        start = LAYER.match(line)
        if start:
            items.append((int(start.group(1)), line[start.end() :]))
        elif items and line.startswith("   "):
            items[-1] = (items[-1][0], f"{items[-1][1]} {line}")
        elif line.strip():
            items.append((0, ""))  # the list has ended: later text places nothing
    problems = []
    numbers = [number for number, _ in items if number]
    if numbers != list(range(1, len(numbers) + 1)):
        problems.append(f"the layers are numbered {numbers}, not 1, 2, 3, ...")
    layer_of: dict[str, int] = {}
    for number, text in items:
        for named in NAMED.findall(text) if number else []:
            full = root if named == root else f"{root}.{named.rstrip('/')}"
            placed = [m for m in modules if m == full or (named.endswith("/") and m.startswith(f"{full}."))]
            for module in placed:
                if module in layer_of and layer_of[module] != number:
                    problems.append(f"{module} is in layers {layer_of[module]} and {number}")
                layer_of[module] = number
    problems += [f"{module} is in no layer" for module in sorted(set(modules) - set(layer_of))]
    return layer_of, problems


def upward(graph: Mapping[str, Mapping[str, int]], layer_of: Mapping[str, int]) -> list[str]:
    """The imports from a higher layer than the importer's, as `importer:line -> imported`."""
    return [
        f"{name}:{line} (layer {layer_of[name]}) -> {target} (layer {layer_of[target]})"
        for name, targets in sorted(graph.items())
        for target, line in sorted(targets.items())
        if layer_of[target] > layer_of[name]
    ]


def circle(graph: Mapping[str, Collection[str]]) -> list[str]:
    """One import circle of `graph`, as the modules around it (the first again at the end), or []."""
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


def test_every_module_is_in_one_layer() -> None:
    modules = _modules()
    layer_of, problems = layers((LIBRARY / "README.md").read_text(encoding="utf-8"), modules)
    assert not problems
    assert layer_of["rummy_rules.cards"] == 1 and layer_of["rummy_rules.game"] == max(layer_of.values())


def test_the_rules_import_only_downward() -> None:
    modules = _modules()
    graph = import_graph(modules)
    assert len(graph) > 40 and "rummy_rules.cards" in graph["rummy_rules.melds"]  # the walk sees the package
    layer_of, _ = layers((LIBRARY / "README.md").read_text(encoding="utf-8"), modules)
    assert not (found := upward(graph, layer_of)), "\n".join(found)
    found = circle(graph)
    assert not found, " -> ".join(found)


README = """# x

## Layers

Text naming `c` is not a layer.

1. **Low**: `a`, `b` (not `b.thing`),
   and `sub/`.
2. **High**: `c`, `pkg`.

Later text naming `a` places nothing.

## Next
"""

MODULES = ("pkg", "pkg.a", "pkg.b", "pkg.c", "pkg.sub", "pkg.sub.d")


def test_each_check_finds_what_it_forbids() -> None:
    layer_of, problems = layers(README, MODULES)
    assert layer_of == {"pkg": 2, "pkg.a": 1, "pkg.b": 1, "pkg.c": 2, "pkg.sub": 1, "pkg.sub.d": 1}
    assert not problems
    _, problems = layers(README.replace("`c`, ", "").replace("`pkg`", "`pkg`, `a`"), MODULES)
    assert problems == ["pkg.a is in layers 1 and 2", "pkg.c is in no layer"]
    assert layers(README.replace("2. **High", "3. **High"), MODULES)[1] == [
        "the layers are numbered [1, 3], not 1, 2, 3, ..."
    ]

    low = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.c import C\n"
    assert imported_modules(low, "pkg.a", MODULES) == {"pkg.c": 3}
    local = "import json\n\ndef f() -> None:\n    from pkg import b, c\n    import pkg.sub.d\n"
    assert imported_modules(local, "pkg.a", MODULES) == {"pkg.b": 4, "pkg.c": 4, "pkg.sub.d": 5}
    assert imported_modules("from . import c\nfrom .sub import d\n", "pkg.a", MODULES) == {
        "pkg.c": 1,
        "pkg.sub.d": 2,
    }
    assert imported_modules("from .. import b\n", "pkg.sub.d", MODULES) == {"pkg.b": 1}
    assert imported_modules("from . import d\n", "pkg.sub", MODULES, package=True) == {"pkg.sub.d": 1}

    graph = {"pkg.a": {"pkg.c": 3}, "pkg.b": {"pkg.a": 1}, "pkg.c": {}}
    assert upward(graph, layer_of) == ["pkg.a:3 (layer 1) -> pkg.c (layer 2)"]
    assert not circle(graph)
    graph["pkg.c"] = {"pkg.b": 1}  # within a layer or across, a circle is found
    assert circle(graph) == ["pkg.a", "pkg.c", "pkg.b", "pkg.a"]
