"""Account names: what may be one, and when two are the same name.

A name is NFKC-normalized, then must be 3 to 24 letters (any script), digits, `_` or `-`, starting
with a letter or digit. Two names are one when their canonical forms are equal: case-folded, then
each character replaced by its look-alikes' prototype, so `alice`, `ALICE`, `a1ice`
and `\u0430lice` (with U+0430, a Cyrillic a) are one name and only the first to sign up has it.

The look-alikes come from Unicode's confusables.txt as the confusable-homoglyphs package ships it (a
well-kept copy of UTS #39 data). That copy lists which characters look alike in both directions, not
UTS #39's one prototype per character, so a character's prototype is taken as the look-alike most
characters look like (`l` for `I`, `1` and `|`). The pairs are not joined into classes: chained, they
make one class of `0`, `6`, `o` and of `r`, `u`, `v`, `y`, `z`, and `player0` would be `player6`.
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
    """The form uniqueness compares: case-folded (`ß` as `ss`), each character then its prototype."""
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
    """Case-folded character -> its prototype, case-folded: of it and the direct look-alikes of it and
    of its upper case, the one with the most look-alikes (a hub such as `l` for `i`, `1` and `|`; `o`
    for `0`), the smallest on a tie. Characters that are their own prototype are left out."""
    data = resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8")
    alikes = {
        char: [alike["c"] for alike in listed if len(alike["c"]) == 1]
        for char, listed in json.loads(data).items()
        if len(char) == 1
    }

    def folded(char: str) -> str:
        return char.casefold() if len(char.casefold()) == 1 else char

    def weight(char: str) -> tuple[int, int]:
        return len(alikes.get(char, ())), -ord(char)

    classes: dict[str, str] = {}
    for char in alikes:
        key = folded(char)
        near = {key, *alikes.get(key, ()), *alikes.get(key.upper(), ())}  # `i` looks like `l` as `I`
        prototype = folded(max(near, key=weight))
        if prototype != key:
            classes[key] = prototype
    return classes
