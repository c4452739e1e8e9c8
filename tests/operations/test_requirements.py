"""The image's dependencies (requirements/runtime.txt) are the runtime set and nothing else: exactly what
requirements/runtime.in resolves to, pinned as the development lock pins it, covering every third-party
dependency the packages declare, and none of the development tools."""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = ROOT / "requirements"
DEV_TOOLS = {
    "pytest",
    "mypy",
    "ruff",
    "hypothesis",
    "testcontainers",
    "selenium",
    "grpcio-tools",
    "mypy-protobuf",
}


def _name(text: str) -> str:
    return re.sub(r"[-_.]+", "-", text).lower()


def _lines(path: Path) -> list[str]:
    return [
        line.split("#")[0].strip() for line in path.read_text().splitlines() if line.split("#")[0].strip()
    ]


def _pins(path: Path) -> dict[str, str]:
    return {_name(line.partition("==")[0]): line for line in _lines(path)}


def _closure(names: set[str]) -> set[str]:
    """`names` and everything they require (no extras), as installed from the lock."""
    found: set[str] = set()
    todo = list(names)
    while todo:
        name = _name(todo.pop())
        if name in found:
            continue
        found.add(name)
        for text in importlib.metadata.distribution(name).requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return found


def _local() -> dict[str, list[str]]:
    """Each local package (libs/*, services/*) and the dependencies its pyproject declares."""
    packages = {}
    for pyproject in sorted([*ROOT.glob("libs/*/pyproject.toml"), *ROOT.glob("services/*/pyproject.toml")]):
        project = tomllib.loads(pyproject.read_text())["project"]
        packages[_name(project["name"])] = [
            _name(Requirement(d).name) for d in project.get("dependencies", [])
        ]
    return packages


def test_the_runtime_pins_are_the_runtime_set_resolved_and_pinned_as_the_lock_pins_it() -> None:
    wanted = _closure({_name(Requirement(line).name) for line in _lines(REQUIREMENTS / "runtime.in")})
    runtime, lock = _pins(REQUIREMENTS / "runtime.txt"), _pins(REQUIREMENTS / "lock.txt")
    expected = "\n".join(sorted((lock[name] for name in wanted), key=str.lower))
    assert set(runtime) == wanted, f"requirements/runtime.txt should pin exactly:\n{expected}"
    assert all(runtime[name] == lock[name] for name in runtime), f"pins differ from lock.txt:\n{expected}"


def test_the_runtime_set_has_every_dependency_the_packages_declare_and_no_development_tool() -> None:
    runtime = set(_pins(REQUIREMENTS / "runtime.txt"))
    local = _local()
    declared = {dependency for dependencies in local.values() for dependency in dependencies}
    assert declared - set(local) <= runtime, declared - set(local) - runtime
    assert not runtime & DEV_TOOLS
