"""Account names: what may be one, and when two are the same name.

A name is NFKC-normalized, then must be 3 to 24 letters (any script), digits, `_` or `-`, starting
with a letter or digit. Two names are one when their canonical forms are equal: case-folded, then
each character replaced by the representative of its confusable class, so `alice`, `ALICE`, `a1ice`
and `\u0430lice` (with U+0430, a Cyrillic a) are one name and only the first to sign up has it.

The confusable classes come from Unicode's confusables.txt as the confusable-homoglyphs package
ships it (a well-kept copy of UTS #39 data). That copy lists which characters look alike in both
directions, not UTS #39's one prototype per character, so here the pairs of single characters are
joined into classes (with each character's other cases in the same class) and a class's smallest
code point stands for it. Joining can only make more names one name than UTS #39 would, never fewer:
a refusal "that name is taken" is the safe mistake.
"""

from __future__ import annotations

import functools
import json
import unicodedata
from importlib import resources
from typing import Final

from rummy_service.errors import InvalidArgument, quote

MIN_CHARS: Final = 3
MAX_CHARS: Final = 24
MAX_INPUT_CHARS: Final = 64
"""Checked before normalizing: NFKC can make a string longer, so both are bounded."""
RESERVED: Final = frozenset(
    {
        "admin",
        "administrator",
        "anonymous",
        "bot",
        "engine",
        "guest",
        "identity",
        "matchmaking",
        "meldstream",
        "moderator",
        "nobody",
        "null",
        "operator",
        "root",
        "scoring",
        "service",
        "spectator",
        "staff",
        "support",
        "system",
        "web",
    }
)
PROVIDER_PREFIX: Final = "p-"
RESERVED_PREFIXES: Final = ("bot-", "guest-", "service-", PROVIDER_PREFIX)
"""The house bots' names, generated guest names, service identities and the accounts of the OpenID
provider's users (`p-` and a hash of their issuer and subject)."""


def normalized(raw: str) -> str:
    """The name as stored and shown: NFKC, checked against the rules (INVALID_ARGUMENT `bad_name`)."""
    if len(raw) > MAX_INPUT_CHARS:
        raise InvalidArgument("too_long", f"name has {len(raw)} characters; at most {MAX_CHARS}")
    name = unicodedata.normalize("NFKC", raw.strip())
    if not MIN_CHARS <= len(name) <= MAX_CHARS:
        raise InvalidArgument("bad_name", f"a name has {MIN_CHARS} to {MAX_CHARS} characters")
    for char in name:
        if not (_letter_or_digit(char) or char in "_-"):
            raise InvalidArgument(
                "bad_name", f"a name holds letters, digits, '_' and '-' only, not {quote(char)}"
            )
    if not _letter_or_digit(name[0]):
        raise InvalidArgument("bad_name", "a name starts with a letter or a digit")
    return name


def canonical(name: str) -> str:
    """The form uniqueness compares: case-folded, each character its confusable class's stand-in."""
    classes = _classes()
    return "".join(classes.get(char, char) for char in unicodedata.normalize("NFKC", name).casefold())


def reserved(name: str) -> bool:
    """Names no one may sign up with (compared canonically, so `0perator` is `operator`)."""
    key = canonical(name)
    return key in _reserved_keys() or any(key.startswith(canonical(p)) for p in RESERVED_PREFIXES)


def _letter_or_digit(char: str) -> bool:
    category = unicodedata.category(char)
    return category.startswith("L") or category == "Nd"


@functools.cache
def _reserved_keys() -> frozenset[str]:
    return frozenset(canonical(name) for name in RESERVED)


@functools.cache
def _classes() -> dict[str, str]:
    """Character -> the smallest code point of its class (pairs of look-alikes and of cases joined)."""
    data = resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8")
    parent: dict[str, str] = {}

    def find(char: str) -> str:
        root = char
        while parent.setdefault(root, root) != root:
            root = parent[root]
        while parent[char] != root:  # path compression
            parent[char], char = root, parent[char]
        return root

    def join(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    for char, alikes in json.loads(data).items():
        for alike in alikes:
            if len(char) == 1 and len(alike["c"]) == 1:
                join(char, alike["c"])
    for char in list(parent):
        for other in {char.lower(), char.upper(), char.casefold()}:
            if len(other) == 1:
                join(char, other)
    return {char: find(char) for char in parent if find(char) != char}
