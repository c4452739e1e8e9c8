"""Strings from outside (player ids, names, anything a client sent) as a terminal or a log shows them.

Such a string is only text: a raw ESC would let it recolour, move or clear a terminal, a bidi
override (U+202E) reverse the rest of a line, a newline forge a log line, a zero-width character
make two names look alike. `printable` writes each character that would act instead of showing as
its escape (`\\x1b`, `\\u202e`), so the text is shown, never obeyed, and what is hidden in it is seen;
`clipped` cuts what is too long to show and says so. Web pages do the same in the browser
(services/web/src/meldstream_web/static/names.js).
"""

from __future__ import annotations


def printable(value: str) -> str:
    """`value` with every character that is not printable escaped: controls (C0, DEL, C1: an ANSI
    sequence loses its ESC and shows as text), format characters (bidi controls, zero-width ones),
    separators other than the space, unassigned code points and lone surrogates."""
    if value.isprintable():
        return value
    # A character that is not printable has Python's escape as its repr: \n, \x1b, \u202e, \U000e0001.
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in value)


def clipped(value: str, limit: int) -> str:
    """`value` cut to its first `limit` characters, followed by how many more there were."""
    if len(value) <= limit:
        return value
    return f"{value[:limit]}…(+{len(value) - limit} characters)"


def shown(value: str, limit: int) -> str:
    """A name or a line of text as a terminal or a log shows it: cut at `limit`, then made printable."""
    return printable(clipped(value, limit))
