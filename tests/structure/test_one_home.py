"""Each idea of issue 28's "one home" stays written once: the product's sources (libs/*/src,
services/*/src and the page's JavaScript) are read, never run, for the ways each would drift back.

- who may act out of turn: only `rummy_rules.out_of_turn` lists the out-of-turn commands, the events
  that open them, or their wire names (`rummy_contracts.wire.OUT_OF_TURN_KINDS`; the page reads
  `out_of_turn` from /api/variants);
- the seat limit: `rummy_rules.state.MAX_SEATS`, never `range(8)` or `range(9)` again;
- a phase is compared by its enum's name, never by its number (`phase == 4`);
- rummy_contracts, which services build on, imports nothing of the service layer (rummy_service) and
  no service;
- how a game's log is folded (`rummy_contracts.projection`) is the contracts', so no service but the
  engine imports the engine, save the command line, which starts engines (`meldstream run`): it may
  import their launch and operator modules only (`CLI_MAY_IMPORT`), never how a game is folded or shown.
Each check is also run on a snippet that breaks it, so none passes by finding nothing.
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Callable, Collection, Iterable, Iterator
from functools import partial
from pathlib import Path

from rummy_contracts import house
from rummy_contracts.wire import OUT_OF_TURN_KINDS
from rummy_rules.out_of_turn import OUT_OF_TURN, OUT_OF_TURN_OPENERS
from rummy_rules.state import MAX_SEATS

from .imports import imported, importing

ROOT = Path(__file__).resolve().parents[2]
HOME = ROOT / "libs" / "rummy_rules" / "src" / "rummy_rules" / "out_of_turn.py"
STATIC = ROOT / "services" / "web" / "src" / "meldstream_web" / "static"
CONTRACTS = ROOT / "libs" / "rummy_contracts"
SERVICES = ROOT / "services"
ENGINE, CLI = "rummy_engine", "meldstream_cli"
CLI_MAY_IMPORT = frozenset({"config", "engine", "seeds", "stores", "refusals", "verify"})
"""The engine's modules the command line may import: to configure and start engines, read the
refusals stream and verify shuffles for the operator."""

# The sets a second list would restate: the commands, their opening events, their wire names.
OUT_OF_TURN_SETS = (
    frozenset(command.__name__ for command in OUT_OF_TURN),
    frozenset(event.__name__ for event in OUT_OF_TURN_OPENERS),
    frozenset(OUT_OF_TURN_KINDS),
)


def _sources() -> Iterator[Path]:
    for src in sorted([*ROOT.glob("libs/*/src"), *ROOT.glob("services/*/src")]):
        for path in sorted(src.rglob("*.py")):
            if not path.name.endswith(("_pb2.py", "_pb2_grpc.py")):
                yield path


def _scripts() -> Iterator[Path]:
    return (path for path in sorted(STATIC.glob("*.js")) if ".min." not in path.name)


def _members(node: ast.AST) -> list[str] | None:
    """The names or strings a collection literal (or an `A | B` union of names) holds, None when it
    holds anything else."""
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        parts: list[ast.AST] = list(node.elts)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _members(node.left), _members(node.right)
        return None if left is None or right is None else left + right
    else:
        parts = [node]
    names = []
    for part in parts:
        if isinstance(part, ast.Name):
            names.append(part.id)
        elif isinstance(part, ast.Attribute):
            names.append(part.attr)
        elif isinstance(part, ast.Constant) and isinstance(part.value, str):
            names.append(part.value)
        else:
            return None
    return names


def _annotations(tree: ast.AST) -> set[int]:
    """The ids of the nodes inside type annotations (a handler typed `BuyDiscard | PassBuy` lists
    nothing for anyone to ask)."""
    roots: list[ast.expr | None] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg | ast.AnnAssign):
            roots.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            roots.append(node.returns)
    return {id(inner) for root in roots if root is not None for inner in ast.walk(root)}


def out_of_turn_lists(source: str) -> list[int]:
    """Lines of `source` holding a collection (or union) of exactly the out-of-turn commands, openers
    or wire names, outside type annotations."""
    lines = []
    tree = ast.parse(source)
    typing_only = _annotations(tree)
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Tuple | ast.List | ast.Set | ast.BinOp):
            members = _members(node)
            if members and len(members) > 1 and frozenset(members) in OUT_OF_TURN_SETS:
                lines.append(node.lineno)
    return sorted(set(lines))


def script_out_of_turn_lists(script: str) -> list[int]:
    """Lines of a script holding an array of exactly the out-of-turn wire names."""
    lines = []
    for match in re.finditer(r"\[([^\[\]]*)\]", script):
        items = [item.strip() for item in match.group(1).split(",") if item.strip()]
        words = [item[1:-1] for item in items if re.fullmatch(r"([\"'`])\w+\1", item)]
        if len(words) == len(items) > 1 and frozenset(words) == OUT_OF_TURN_SETS[2]:
            lines.append(script.count("\n", 0, match.start()) + 1)
    return lines


def seat_limits(source: str) -> list[int]:
    """Lines of `source` writing the seat limit as a number: `range(8)`, `range(9)`, `range(2, 9)`."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
            stop = node.args[0] if len(node.args) == 1 else node.args[1] if len(node.args) > 1 else None
            number = stop.value if isinstance(stop, ast.Constant) else None
            if number == MAX_SEATS + 1 or (number == MAX_SEATS and len(node.args) == 1):
                lines.append(node.lineno)
    return lines


def phase_numbers(source: str) -> list[int]:
    """Lines of `source` comparing a phase with a number."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            named = any(isinstance(s, ast.Attribute | ast.Name) and _name(s).endswith("phase") for s in sides)
            if named and any(isinstance(s, ast.Constant) and type(s.value) is int for s in sides):
                lines.append(node.lineno)
    return lines


def _name(node: ast.Attribute | ast.Name) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id


SCRIPT_PHASE = re.compile(r"phase\s*[!=]==?\s*\d|\d\s*[!=]==?\s*[\w.]*phase\b")


def _service_packages() -> dict[str, Path]:
    """Each service's top-level package and its folder (services/*/src/<package>)."""
    return {init.parent.name: init.parent for init in sorted(SERVICES.glob("*/src/*/__init__.py"))}


def contract_imports(source: str) -> list[int]:
    """Lines of `source` importing the service layer (rummy_service) or a service."""
    return importing(source, {"rummy_service", *_service_packages()})


def engine_imports(source: str, allowed: Collection[str] = ()) -> list[int]:
    """Lines of `source` importing the engine, other than its modules named in `allowed` (`config` for
    `rummy_engine.config`)."""
    lines = set()
    for line, name in imported(source):
        parts = name.split(".")
        if parts[0] == ENGINE and (len(parts) == 1 or parts[1] not in allowed):
            lines.add(line)
    return sorted(lines)


def _dependencies(pyproject: Path) -> tuple[str, list[str]]:
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    return project["name"], project.get("dependencies", [])


def _found(check: Callable[[str], list[int]], paths: Iterable[Path]) -> list[str]:
    found = []
    for path in paths:
        for line in check(path.read_text(encoding="utf-8")):
            found.append(f"{path.relative_to(ROOT)}:{line}")
    return found


def test_only_the_rules_list_who_may_act_out_of_turn() -> None:
    assert _found(out_of_turn_lists, [HOME]), "the check no longer sees the list at its home"
    assert not _found(out_of_turn_lists, [path for path in _sources() if path != HOME])
    assert not _found(script_out_of_turn_lists, _scripts())


def test_the_seat_limit_is_written_once() -> None:
    assert not _found(seat_limits, _sources())
    assert len(house.NAMES) == MAX_SEATS - 1  # a house bot for every seat beside a person


def test_phases_are_compared_by_name() -> None:
    assert not _found(phase_numbers, _sources())
    texts = {path.name: path.read_text(encoding="utf-8") for path in _scripts()}
    assert not [f"{name}: {m.group()}" for name, text in texts.items() for m in SCRIPT_PHASE.finditer(text)]


def test_the_contracts_import_neither_the_service_layer_nor_a_service() -> None:
    assert not _found(contract_imports, sorted((CONTRACTS / "src").rglob("*.py")))
    services = {_dependencies(pyproject)[0] for pyproject in SERVICES.glob("*/pyproject.toml")}
    assert "rummy-engine" in services, "the check no longer finds the services' distributions"
    _, dependencies = _dependencies(CONTRACTS / "pyproject.toml")
    assert not {"rummy-service", *services} & set(dependencies)


def test_no_service_but_the_engine_and_its_launcher_imports_the_engine() -> None:
    packages = _service_packages()
    assert {ENGINE, CLI} <= set(packages), "the check no longer finds the packages it names"
    assert all((packages[ENGINE] / f"{module}.py").is_file() for module in CLI_MAY_IMPORT)
    found = []
    for name, folder in packages.items():
        if name != ENGINE:
            check = partial(engine_imports, allowed=CLI_MAY_IMPORT if name == CLI else ())
            found += _found(check, sorted(folder.rglob("*.py")))
    assert not found
    for pyproject in sorted(SERVICES.glob("*/pyproject.toml")):
        name, dependencies = _dependencies(pyproject)
        if name not in ("rummy-engine", "meldstream"):  # the command line starts engines
            assert "rummy-engine" not in dependencies, name


def test_each_check_finds_what_it_forbids() -> None:
    assert out_of_turn_lists("if kind in ('pass_buy', 'buy_discard'):\n    pass\n") == [1]
    assert out_of_turn_lists("x = 1\nOUT = (commands.BuyDiscard, PassBuy)\n") == [2]
    assert out_of_turn_lists("ok = isinstance(event, BuyRequested | BuyWaived)\n") == [1]
    assert not out_of_turn_lists("def handle(command: BuyDiscard | PassBuy) -> None:\n    pass\n")
    assert not out_of_turn_lists("ORDER = ('buy_discard', 'pass_buy', 'discard')\n")
    assert script_out_of_turn_lists('const a = 1;\nconst OUT = ["buy_discard", "pass_buy"];\n') == [2]
    assert not script_out_of_turn_lists('const ORDER = ["buy_discard", "pass_buy", "discard"];\n')
    assert seat_limits("a = range(8)\nb = range(2, 9)\nc = range(2, 8)\nd = range(9)\n") == [1, 2, 4]
    assert phase_numbers("if view.phase == 4:\n    pass\nok = view.phase == gs.PHASE_DRAW\n") == [1]
    assert SCRIPT_PHASE.search("if (view.phase === 4) return;")
    assert not SCRIPT_PHASE.search('view.phase === "PHASE_GAME_OVER"')
    assert contract_imports("import json\nfrom rummy_service.config import OtherFormat\n") == [2]
    assert contract_imports("from rummy_engine.projection import Table\nimport meldstream_web.export\n") == [
        1,
        2,
    ]
    assert not contract_imports("from rummy_contracts.facts import Fact\nimport rummy_store\n")
    breaking = "import json\nfrom rummy_engine.projection import EngineState\nimport rummy_engine\n"
    assert engine_imports(breaking) == [2, 3]
    assert engine_imports(breaking, CLI_MAY_IMPORT) == [2, 3]
    assert engine_imports("from rummy_engine import config, rendering\n", CLI_MAY_IMPORT) == [1]
    assert not engine_imports("from rummy_engine import config\nimport rummy_engine.seeds\n", CLI_MAY_IMPORT)
