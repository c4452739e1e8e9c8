"""Every reason code a service can refuse a call with is in docs/clients/errors.md, and the page lists
no code the services no longer raise: clients switch on these codes, so the page is their contract.

Codes are read from the source of the services and of rummy_service: the `code` given to every
exception class there whose constructor takes one (`ServiceError` and its subclasses, matchmaking's
`TournamentError`, the tokens' `AuthError`), or its default, or the literal one a constructor hands
up (`RateLimited`). A code passed on from another error
(`exc.code`) is read where that error is made; the rules' own codes are documented in
docs/players/refusals.md and checked by test_rule_citations.py. A code in a form this test cannot read
fails it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "libs" / "rummy_service" / "src", *sorted((ROOT / "services").glob("*/src"))]
PAGE = ROOT / "docs" / "clients" / "errors.md"
# The rules' codes the services pass on as their own (`InvalidArgument(exc.code, ...)`), which the page
# lists where they reach clients; they are checked against the rules in test_rule_citations.py.
PASSED_ON = frozenset(
    {"unknown_variant", "unknown_option", "bad_option_value", "bad_player_count", "cannot_split"}
)


def _python_files() -> list[Path]:
    return [path for source in SOURCES for path in sorted(source.rglob("*.py"))]


def _constants(trees: list[ast.Module]) -> dict[str, str]:
    """Module-level string constants (`NOT_OWNER = "not_owner"`), by name."""
    found: dict[str, str] = {}
    for tree in trees:
        for node in tree.body:
            target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
            match target, getattr(node, "value", None):
                case ast.Name(id=name), ast.Constant(value=str(text)):
                    found[name] = text
    return found


def _fixed_code(call: ast.Call) -> str | None:
    """The code a constructor passes to its base's, when it is a literal."""
    match call.func, call.args:
        case ast.Attribute(value=ast.Call(func=ast.Name(id="super")), attr="__init__"), [
            ast.Constant(value=str(code)),
            *_,
        ]:
            return code
    return None


def _code_parameters(trees: list[ast.Module]) -> dict[str, tuple[int, str | None]]:
    """Exception classes whose constructor takes a `code`: its position in a call, and its default."""
    classes: dict[str, tuple[list[str], ast.FunctionDef | None]] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                inits = (f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__")
                init = next(inits, None)
                classes[node.name] = ([b.id for b in node.bases if isinstance(b, ast.Name)], init)

    def code_of(name: str) -> tuple[int, str | None] | None:
        bases, init = classes[name]
        if init is None:  # inherited, e.g. InvalidArgument(ServiceError)
            return next((found for base in bases if base in classes and (found := code_of(base))), None)
        params = [a.arg for a in init.args.args][1:]
        if "code" not in params:  # a fixed code handed up (`super().__init__("rate_limited", ...)`)
            fixed = (_fixed_code(call) for call in ast.walk(init) if isinstance(call, ast.Call))
            code = next((found for found in fixed if found), None)
            return None if code is None else (len(params), code)
        index = params.index("code")
        defaults = dict(zip(params[len(params) - len(init.args.defaults) :], init.args.defaults, strict=True))
        match defaults.get("code"):
            case ast.Constant(value=str(default)):
                return index, default
        return index, None

    return {name: found for name in classes if (found := code_of(name))}


def raised() -> tuple[dict[str, str], list[str]]:
    """Codes (with where each is raised) and what this test cannot read. An f-string code is kept as
    its fixed start (`missing_`)."""
    files = _python_files()
    trees = [ast.parse(path.read_text(encoding="utf-8")) for path in files]
    constants = _constants(trees)
    refusals = _code_parameters(trees)
    codes: dict[str, str] = {}
    unreadable: list[str] = []
    for path, tree in zip(files, trees, strict=True):
        for call in ast.walk(tree):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
                continue
            if call.func.id not in refusals:
                continue
            where = f"{path.relative_to(ROOT)}:{call.lineno}"
            index, default = refusals[call.func.id]
            given = call.args[index] if len(call.args) > index else None
            code = given or next((k.value for k in call.keywords if k.arg == "code"), None)
            if code is None and default == "":  # no code at all (the web gateway's own 400s)
                continue
            if code is None and default is not None:
                codes.setdefault(default, where)
            elif isinstance(code, ast.Constant) and isinstance(code.value, str):
                codes.setdefault(code.value, where)
            elif isinstance(code, ast.Name) and code.id in constants:
                codes.setdefault(constants[code.id], where)
            elif isinstance(code, ast.Attribute) and code.attr in constants:  # `auth.EXPIRED`
                codes.setdefault(constants[code.attr], where)
            elif isinstance(code, ast.JoinedStr) and isinstance(start := code.values[0], ast.Constant):
                codes.setdefault(str(start.value), where)
            elif not (isinstance(code, ast.Attribute) and code.attr == "code"):
                unreadable.append(f"{where}: the code of {call.func.id}()")
    return codes, unreadable


def documented() -> set[str]:
    """The codes in the Code column of the page's tables, `missing_<field>` as `missing_`."""
    found: set[str] = set()
    column: int | None = None
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if not cells:
            column = None
        elif "Code" in cells:
            column = cells.index("Code")
        elif column is not None and len(cells) > column:
            found.update(code.split("<")[0] for code in re.findall(r"`([a-z_<>]+)`", cells[column]))
    return found


def test_the_services_are_read() -> None:
    codes, _ = raised()
    assert {"not_owner", "store_unavailable", "command_id_reused", "missing_", "tournament_started"} <= set(
        codes
    )


def test_every_code_is_readable() -> None:
    _, unreadable = raised()
    assert not unreadable, "codes this test cannot read (extend it):\n" + "\n".join(unreadable)


def test_every_code_is_documented() -> None:
    codes, _ = raised()
    missing = sorted(f"{where}: {code}" for code, where in codes.items() if code not in documented())
    assert not missing, f"codes without an entry in {PAGE.relative_to(ROOT)}:\n" + "\n".join(missing)


def test_no_code_is_documented_that_no_service_raises() -> None:
    codes, _ = raised()
    stale = sorted(documented() - set(codes) - PASSED_ON)
    assert not stale, f"{PAGE.relative_to(ROOT)} lists codes no service raises: {stale}"
