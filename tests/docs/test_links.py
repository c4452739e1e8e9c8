"""Every relative link in README.md and docs/ leads somewhere: the file exists and, for a Markdown
target, so does the anchor (a heading, as GitHub names it, or an explicit `id`). The README is short
and the rest lives in docs/ by reader, so a moved page or renamed heading must not leave a dead link."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
FENCE = re.compile(r"^(```|~~~)")
CODE_SPAN = re.compile(r"`+[^`]*`+")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
EXPLICIT_ID = re.compile(r"""<a\s+(?:id|name)=["']([^"']+)["']""")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # http:, https:, mailto:


def prose(path: Path) -> Iterator[tuple[int, str]]:
    """The page's lines outside fenced code blocks, numbered from 1."""
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text lowercased, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"<[^>]+>", "", heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text).replace("`", "")
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    """Every anchor a link into `path` may name: headings (duplicates numbered) and explicit ids."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in prose(path):
        found.update(EXPLICIT_ID.findall(line))
        heading = HEADING.match(line)
        if heading:
            base = slug(heading.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return frozenset(found)


def links(path: Path) -> Iterator[tuple[int, str]]:
    for number, line in prose(path):
        text = CODE_SPAN.sub(lambda span: " " * len(span.group()), line)
        for target in (*LINK.findall(text), *REFERENCE.findall(text)):
            yield number, target


def problem(page: Path, target: str) -> str | None:
    """What is wrong with one link from `page`, or None when it resolves."""
    if EXTERNAL.match(target):
        return None
    address, _, anchor = target.partition("#")
    resolved = (page.parent / address).resolve() if address else page
    if not resolved.is_relative_to(ROOT):
        return "points outside the repository"
    if not resolved.exists():
        return "no such file"
    if resolved.is_dir():
        resolved = resolved / "README.md"
        if not resolved.exists():
            return "a directory without README.md" if anchor else None
    if anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
        return f"no anchor #{anchor} in {resolved.relative_to(ROOT)}"
    return None


def test_the_pages_are_found() -> None:
    names = {page.relative_to(ROOT).as_posix() for page in PAGES}
    readers = {"docs/players/README.md", "docs/operators/README.md", "docs/clients/README.md"}
    assert {"README.md", "docs/contributing.md", *readers} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    dead = [
        f"{page.relative_to(ROOT)}:{number}: ({target}) {reason}"
        for number, target in links(page)
        if (reason := problem(page, target)) is not None
    ]
    assert not dead, "dead links:\n" + "\n".join(dead)


def test_a_dead_link_or_anchor_is_reported() -> None:
    page = ROOT / "README.md"
    assert problem(page, "docs/players/README.md") is None
    assert problem(page, "#how-it-fits-together") is None
    assert problem(page, "docs/players/kalooki.md#s3.4.1") is None
    assert problem(page, "docs/no-such-page.md") == "no such file"
    assert problem(page, "docs/players/kalooki.md#s99") == "no anchor #s99 in docs/players/kalooki.md"
    assert problem(page, "../outside.md") == "points outside the repository"


def test_slugs_follow_github() -> None:
    assert slug("Routing: `not_owner` and the `meldstream-owner` trailer") == (
        "routing-not_owner-and-the-meldstream-owner-trailer"
    )
    assert slug("Matchmaking (`python -m rummy_matchmaking`)") == "matchmaking-python--m-rummy_matchmaking"
    assert slug("Engine: `make bench-engine`") == "engine-make-bench-engine"
