"""Every refusal the rules library can raise resolves inside the repository, in docs/players.

A `RuleViolation` carries a code (`already_drawn`) and a citation (`kalooki §3.4.1 src ¶7`). The code
must have an entry in docs/players/refusals.md, and every passage the citation names must have an
anchor on the variant's page: `§3.4.1` -> `#s3.4.1`, `D7` -> `#d7`, `src ¶7` -> `#src-7` (rummy40's
sentences: `src S6` -> `#src-s6`), an option -> `#option-<name>`, `vectors/FORMAT.md` ->
`#vectors-format`. The citations are read from the variants' citation tables (what `Rules.cite` can
return) and from the source of the rules package; a citation or code written in a form this test
cannot read fails it, so nothing new goes unchecked.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from rummy_rules.variant import variant_named
from rummy_rules.variants import VARIANTS

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "libs" / "rummy_rules" / "src" / "rummy_rules"
PLAYERS = ROOT / "docs" / "players"
REFUSALS = PLAYERS / "refusals.md"

EXPLICIT_ID = re.compile(r"""<a\s+(?:id|name)=["']([^"']+)["']""")
PASSAGE = re.compile(
    r"§(?P<section>\d+(?:\.\d+)*)"
    r"|D(?P<decision>\d+)"
    r"|src (?P<mark>[¶S])(?P<first>\d+)(?:-[¶S](?P<last>\d+))?"
    r"|(?P<format>vectors/FORMAT\.md)"
    r"|(?P<option>[a-z][a-z0-9]*(?:_[a-z0-9]+)+)"
)


@dataclass(frozen=True)
class Citation:
    text: str
    where: str  # where it comes from, for the failure message


@cache
def anchors(page: Path) -> frozenset[str]:
    return frozenset(EXPLICIT_ID.findall(page.read_text(encoding="utf-8")))


def passages(tail: str) -> list[str]:
    """The anchors a citation's passages name; ValueError for words that are no passage."""
    found: list[str] = []
    for word in re.finditer(r"src \S+|\S+", tail):
        part = PASSAGE.fullmatch(word.group())
        if part is None:
            raise ValueError(f"{word.group()!r} is not a passage")
        if part["section"]:
            found.append(f"s{part['section']}")
        elif part["decision"]:
            found.append(f"d{part['decision']}")
        elif part["first"]:
            prefix = "src-" if part["mark"] == "¶" else "src-s"
            first = int(part["first"])
            found.extend(f"{prefix}{n}" for n in range(first, int(part["last"] or first) + 1))
        elif part["format"]:
            found.append("vectors-format")
        else:
            found.append(f"option-{part['option']}")
    return found


def unresolved(citation: str) -> list[str]:
    """What in `citation` has no page or anchor in docs/players (empty when it all resolves)."""
    variant, _, tail = citation.partition(" ")
    page = PLAYERS / f"{variant}.md"
    if variant not in VARIANTS:
        return [f"{variant!r} is not a variant"]
    if not page.exists():
        return [f"no page {page.relative_to(ROOT)}"]
    try:
        wanted = passages(tail)
    except ValueError as exc:
        return [str(exc)]
    return [f"#{anchor}" for anchor in wanted if anchor not in anchors(page)]


def _name(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _argument(call: ast.Call, index: int, keyword: str) -> ast.expr | None:
    if len(call.args) > index:
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def _sources() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(RULES.rglob("*.py")):
        yield path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def _code_wrappers() -> tuple[dict[str, int], set[str]]:
    """Functions that raise a RuleViolation whose code is one of their parameters (`melds._fail`):
    by name, that parameter's position in a call; and where those RuleViolations are built."""
    wrappers: dict[str, int] = {}
    inside: set[str] = set()
    for name, tree in _sources():
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef):
                continue
            params = [a.arg for a in function.args.args]
            shift = 1 if params[:1] in (["self"], ["cls"]) else 0
            for call in ast.walk(function):
                if not isinstance(call, ast.Call) or _name(call) != "RuleViolation":
                    continue
                code = _argument(call, 0, "code")
                if isinstance(code, ast.Name) and code.id in params:
                    wrappers[function.name] = params.index(code.id) - shift
                    inside.add(f"{name}:{call.lineno}")
    return wrappers, inside


def raised() -> tuple[dict[str, str], list[Citation], list[str]]:
    """Codes (with where each is raised), citations, and what this test cannot read."""
    wrappers, inside = _code_wrappers()
    codes: dict[str, str] = {}
    citations = [
        Citation(f"{variant} {tail}", f"{variant}.citations[{key!r}]")
        for variant in VARIANTS
        for key, tail in variant_named(variant).citations.items()
    ]
    unreadable: list[str] = []
    for name, tree in _sources():
        for call in ast.walk(tree):
            if not isinstance(call, ast.Call):
                continue
            where = f"{name}:{call.lineno}"
            called = _name(call)
            if called in wrappers or called == "RuleViolation":
                index = 0 if called == "RuleViolation" else wrappers[called]
                code = _argument(call, index, "code")
                if isinstance(code, ast.Constant) and isinstance(code.value, str):
                    codes.setdefault(code.value, where)
                elif where not in inside:
                    unreadable.append(f"{where}: the code of {called}()")
            if called == "RuleViolation":
                citations.extend(_citations(_argument(call, 2, "rule"), where, unreadable))
    return codes, citations, unreadable


def _citations(rule: ast.expr | None, where: str, unreadable: list[str]) -> list[Citation]:
    """The citations one RuleViolation's `rule` argument can be."""
    if rule is None:
        return []
    if isinstance(rule, ast.Constant) and isinstance(rule.value, str):
        return [Citation(rule.value, where)] if rule.value else []
    if isinstance(rule, ast.Call) and _name(rule) == "cite":
        return []  # Rules.cite(key): the variants' citation tables, read whole
    if isinstance(rule, ast.JoinedStr):
        match rule.values:  # f"{variant} §5": every variant's
            case [ast.FormattedValue(), ast.Constant(value=str(tail))]:
                return [Citation(f"{variant}{tail}", where) for variant in VARIANTS]
        if "citations[" in ast.unparse(rule).lower():
            return []  # a variant's own table entry (`rules.CITATIONS[variant][key]`), read whole
    unreadable.append(f"{where}: the citation {ast.unparse(rule)}")
    return []


def documented_codes() -> frozenset[str]:
    return anchors(REFUSALS)


def test_the_rules_are_read() -> None:
    codes, citations, _ = raised()
    assert {"not_your_turn", "meld_without_natural", "too_many_buys"} <= set(codes)  # direct, _fail, literal
    texts = {citation.text for citation in citations}
    # a variant's table (Rules.cite), a literal, f"{variant} §5"
    assert {"kalooki §3.4.1 src ¶7", "contract §3.7.4 D13", "rummy40 §5"} <= texts


def test_every_citation_is_readable() -> None:
    _, _, unreadable = raised()
    assert not unreadable, "this test cannot read (extend it):\n" + "\n".join(unreadable)


def test_every_citation_resolves_in_docs_players() -> None:
    _, citations, _ = raised()
    missing = sorted(
        {
            f"{citation.where}: {citation.text!r}: {', '.join(problems)}"
            for citation in citations
            if (problems := unresolved(citation.text))
        }
    )
    assert not missing, "citations without a passage in docs/players:\n" + "\n".join(missing)


def test_every_code_is_documented() -> None:
    codes, _, _ = raised()
    missing = sorted(f"{where}: {code}" for code, where in codes.items() if code not in documented_codes())
    assert not missing, f"codes without an entry in {REFUSALS.relative_to(ROOT)}:\n" + "\n".join(missing)


def test_no_code_is_documented_that_the_rules_never_raise() -> None:
    codes, _, _ = raised()
    stale = sorted(documented_codes() - set(codes))
    assert not stale, f"{REFUSALS.relative_to(ROOT)} documents codes the rules no longer raise: {stale}"


def test_a_missing_passage_is_reported() -> None:
    assert unresolved("kalooki §3.4.1 src ¶7") == []
    assert unresolved("rummy40 §3.4.3 src S5-S6 D8") == []
    assert unresolved("kalooki §9.9 D99 src ¶1-¶2") == ["#s9.9", "#d99"]
    assert unresolved("kalooki §5 no_such_option") == ["#option-no_such_option"]
    assert unresolved("kalooki see above") == ["'see' is not a passage"]
    assert unresolved("whist §1") == ["'whist' is not a variant"]
