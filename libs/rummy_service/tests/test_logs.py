"""Log configuration from the environment, and the two formats a fact is written in."""

from __future__ import annotations

import json
import logging
import sys

import pytest
from rummy_service import logs
from rummy_service.config import ConfigError


def _record(message: str, *args: object, **fields: object) -> logging.LogRecord:
    logger = logging.getLogger("rummy_test")
    return logger.makeRecord("rummy_test", logging.INFO, __file__, 1, message, args, None, extra=fields)


def test_text_puts_a_facts_fields_after_its_message_as_key_value_pairs() -> None:
    record = _record("game created", game_id="g1", variant="kalooki", players=("ann", "bob"), seat=0)
    line = logs.TextFormatter().format(record)
    assert line.endswith(" INFO rummy_test game created game_id=g1 variant=kalooki players=ann,bob seat=0")
    quoted = logs.TextFormatter().format(_record("action refused", reason='a "b" c', code=""))
    assert quoted.endswith('action refused reason="a \\"b\\" c" code=""')


def test_json_is_one_object_a_line_with_time_level_logger_message_and_the_fields() -> None:
    record = _record("partitions %s claimed", partitions={3, 1}, seat=2)
    line = logs.JsonFormatter().format(record)
    assert "\n" not in line
    parsed = json.loads(line)
    assert parsed["time"].endswith("Z") and parsed["level"] == "INFO" and parsed["logger"] == "rummy_test"
    assert parsed["message"] == "partitions %s claimed" and parsed["partitions"] == [1, 3]
    assert parsed["seat"] == 2
    try:
        raise ValueError("boom")
    except ValueError:
        failed = logging.getLogger("x").makeRecord("x", 40, "f", 1, "failed", (), sys.exc_info())
    assert "ValueError: boom" in json.loads(logs.JsonFormatter().format(failed))["exception"]


def test_configure_reads_level_and_format_and_refuses_what_it_does_not_know() -> None:
    root = logging.getLogger()
    level = root.level
    try:
        logs.configure({"LOG_LEVEL": "debug", "LOG_FORMAT": "JSON"})
        ours = [h for h in root.handlers if isinstance(h, logs._Handler)]
        assert len(ours) == 1 and isinstance(ours[0].formatter, logs.JsonFormatter)
        assert root.level == logging.DEBUG and logging.getLogger("kafka").level == logging.WARNING
        logs.configure({})  # again: replaces its handler, text at INFO
        ours = [h for h in root.handlers if isinstance(h, logs._Handler)]
        assert len(ours) == 1 and isinstance(ours[0].formatter, logs.TextFormatter)
        assert root.level == logging.INFO
        with pytest.raises(ConfigError, match=r"^LOG_LEVEL='loud' is not a level: use one of DEBUG, INFO"):
            logs.configure({"LOG_LEVEL": "loud"})
        with pytest.raises(ConfigError, match=r"^LOG_FORMAT='xml' is not a format: use text or json$"):
            logs.configure({"LOG_FORMAT": "xml"})
    finally:
        for handler in [h for h in root.handlers if isinstance(h, logs._Handler)]:
            root.removeHandler(handler)
        root.setLevel(level)


HOSTILE = ("\x1b[2J\x1b]0;pwned\x07", "ann\u202eevil", "z\u200bw", "two\nlines", "a b,c", "[bold]x[/x]")


def test_text_lines_hold_no_raw_control_character_and_quote_what_is_not_plain() -> None:
    record = _record("player %s refused", HOSTILE[0], players=HOSTILE, game_id="g" * 10_000, player="zoë")
    line = logs.TextFormatter().format(record)
    assert line.isprintable(), repr(line)
    assert " player \\x1b[2J\\x1b]0;pwned\\x07 refused " in line  # the message: escaped, in one line
    items = '"\\u001b[2J\\u001b]0;pwned\\u0007","ann\\u202eevil","z\\u200bw","two\\nlines","a b,c"'
    items += ",[bold]x[/x]"
    assert f" players={items} " in line  # each item quoted alone: the commas still split them
    assert f' game_id="{"g" * logs.FIELD_CHARS}…(+{10_000 - logs.FIELD_CHARS} characters)" ' in line
    assert line.endswith(" player=zoë")  # printable text as it is
    try:
        raise ValueError(HOSTILE[1])
    except ValueError:
        failed = logging.getLogger("x").makeRecord("x", 40, "f", 1, "failed", (), sys.exc_info())
    lines = logs.TextFormatter().format(failed).split("\n")
    assert all(part.isprintable() for part in lines) and lines[-1] == "ValueError: ann\\u202eevil"


def test_json_lines_escape_every_control_character_and_cut_long_values() -> None:
    message = "m" * (logs.MESSAGE_CHARS + 5)
    line = logs.JsonFormatter().format(_record(message, players=HOSTILE, game_id="g" * 10_000))
    assert line.isascii() and line.isprintable(), line[:300]
    parsed = json.loads(line)
    assert parsed["players"] == list(HOSTILE)  # JSON's escapes give every character back
    assert parsed["game_id"] == "g" * logs.FIELD_CHARS + f"…(+{10_000 - logs.FIELD_CHARS} characters)"
    assert parsed["message"].endswith("m…(+5 characters)")
