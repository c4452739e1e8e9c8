"""Hostile strings as a terminal or a log shows them: escaped, never obeyed, and cut saying so."""

from __future__ import annotations

from rummy_service.text import clipped, printable, shown

HOSTILE = {
    "\x1b[2J\x1b]0;pwned\x07red": "\\x1b[2J\\x1b]0;pwned\\x07red",  # clear screen, window title, bell
    "ann\u202eslive": "ann\\u202eslive",  # a right-to-left override
    "z\u200bw\u200c\u200d\ufeffj": "z\\u200bw\\u200c\\u200d\\ufeffj",  # zero-width characters
    "two\nlines\r\x85\u2028": "two\\nlines\\r\\x85\\u2028",  # line breaks forge log lines
    "\x9b31m\x7f\ud800": "\\x9b31m\\x7f\\ud800",  # C1 CSI, DEL, a lone surrogate
}


def test_what_a_terminal_would_act_on_is_shown_as_its_escape() -> None:
    for hostile, escaped in HOSTILE.items():
        assert printable(hostile) == escaped
        assert printable(escaped) == escaped  # nothing is left to act on
        assert printable(hostile).isprintable()


def test_printable_text_is_left_as_typed() -> None:
    for name in ("zoë", "José Núñez", "שלום", "مرحبا", "[bold]x[/bold]", "<img src=x>", "\\u202e", "🂡"):
        assert printable(name) == name


def test_too_long_text_is_cut_and_says_how_much_was_left_out() -> None:
    assert clipped("abcdef", 6) == "abcdef"
    assert clipped("abcdefgh", 6) == "abcdef…(+2 characters)"
    assert shown("\x1b" * 10_000, 3) == "\\x1b\\x1b\\x1b…(+9997 characters)"
