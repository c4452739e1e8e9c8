"""Logging for operators: one line per meaningful fact, as text or JSON, chosen by the environment.

A fact is logged with the standard library and its fields in `extra`:

    log.info("game created", extra={"game_id": game_id, "variant": variant, "players": players})

Text (`LOG_FORMAT=text`, the default) reads `... INFO rummy_engine game created game_id=g1
variant=kalooki players=ann,bob`; JSON (`LOG_FORMAT=json`) writes one object a line with `time`,
`level`, `logger`, `message` and the same fields, for a log pipeline to index. Any attribute a
record carries beyond the standard ones is a field, so modules below this package (rummy_store) log
facts the same way without importing it. Fields are ids, codes and counts: never a token, a secret or
a hidden card.

What a client sent (a player id, a game id, a refusal quoting one) is hostile text: a line holds no
raw control character, bidi override or line break of it (text: escaped, `\\x1b`, `\\u202e`; JSON:
JSON's own escapes), a field value with anything but plain printable text is quoted, and a value or
a message is cut at `FIELD_CHARS` / `MESSAGE_CHARS`, saying how much was left out.
"""

from __future__ import annotations

import contextvars
import datetime as dt
import json
import logging
import sys
from collections.abc import Mapping
from typing import Any, Final

from rummy_service.config import ConfigError, env_str
from rummy_service.text import clipped, printable, shown

VARIABLES: Final = ("LOG_LEVEL", "LOG_FORMAT")  # what `configure` reads, in every service process
LEVELS: Final = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
FORMATS: Final = ("text", "json")
TEXT_LAYOUT: Final = "%(asctime)s %(levelname)s %(name)s %(message)s"
FIELD_CHARS: Final = 200  # a field's value (each item of a list) is cut beyond this
MESSAGE_CHARS: Final = 2000
# What every LogRecord has (plus what formatting adds): the rest of a record's attributes are fields.
_STANDARD: Final = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message",
    "asctime",
    "taskName",
}

caller: contextvars.ContextVar[str] = contextvars.ContextVar("meldstream_caller", default="")
"""The authenticated subject of the gRPC call being served ("" before or without authentication).

Set by a servicer once it knows who calls; the calls interceptor (`metrics.CallMetrics`) names them in
the line it logs when the call ends refused for authorization. Each call is served in its own task, so
the value never leaks from one call to another.
"""


def fields(record: logging.LogRecord) -> dict[str, Any]:
    """The fact's fields: the record's attributes that `extra` added."""
    return {key: value for key, value in record.__dict__.items() if key not in _STANDARD}


def _text(value: object) -> str:
    """A field value as text: sequences' items joined by commas; a string that is empty, holds a
    space, a quote, `=` or anything not printable (a comma too, in a sequence) quoted with JSON's
    escapes, and what JSON leaves raw (bidi controls, C1) escaped."""
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value) if isinstance(value, set | frozenset) else value
        return ",".join(_quoted(str(item), ' "=,') for item in items)
    return _quoted(str(value), ' "=')


def _quoted(text: str, special: str) -> str:
    text = clipped(text, FIELD_CHARS)
    if text and text.isprintable() and not any(c in text for c in special):
        return text
    return printable(json.dumps(text, ensure_ascii=False))


class TextFormatter(logging.Formatter):
    """`time LEVEL logger message key=value ...`: for people reading a terminal."""

    def __init__(self) -> None:
        super().__init__(TEXT_LAYOUT)

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = shown(record.message, MESSAGE_CHARS)  # one fact, one line, nothing obeyed
        return super().formatMessage(record)

    def formatException(self, ei: Any) -> str:
        return _lines(super().formatException(ei))

    def formatStack(self, stack_info: str) -> str:
        return _lines(super().formatStack(stack_info))

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        extra = fields(record)
        if not extra:
            return line
        head, newline, trace = line.partition("\n")  # fields stay on the fact's line, before a traceback
        pairs = " ".join(f"{key}={_text(value)}" for key, value in extra.items())
        return f"{head} {pairs}{newline}{trace}"


def _lines(text: str) -> str:
    """A traceback keeps its lines; what is not printable in them (a message it quotes) is escaped."""
    return "\n".join(printable(line) for line in text.split("\n"))


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (UTC, ISO 8601), level, logger, message, the fields, any traceback."""

    def format(self, record: logging.LogRecord) -> str:
        at = dt.datetime.fromtimestamp(record.created, dt.UTC)
        line: dict[str, Any] = {
            "time": at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": clipped(record.getMessage(), MESSAGE_CHARS),
        }
        for key, value in fields(record).items():
            line.setdefault(key, _json(value))
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


def _json(value: object) -> object:
    """A field value for JSON (which escapes every control and non-ASCII character): strings cut at
    `FIELD_CHARS`, sets sorted."""
    if isinstance(value, str):
        return clipped(value, FIELD_CHARS)
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value) if isinstance(value, set | frozenset) else value
        return [_json(item) for item in items]
    return value


class _Handler(logging.StreamHandler):  # type: ignore[type-arg]
    """The handler `configure` installs: found again and replaced by a second call."""


def configure(env: Mapping[str, str] | None = None) -> None:
    """Log to stderr at LOG_LEVEL (default INFO) in LOG_FORMAT (text or json; default text).

    Called once by every entry point; calling it again replaces its own handler (not others'). A value
    it does not know is a `ConfigError` naming the variable and the values it takes.
    """
    level = env_str("LOG_LEVEL", "INFO", env).strip().upper() or "INFO"
    if level not in LEVELS:
        raise ConfigError(f"LOG_LEVEL={level.lower()!r} is not a level: use one of {', '.join(LEVELS)}")
    form = env_str("LOG_FORMAT", "text", env).strip().lower() or "text"
    if form not in FORMATS:
        raise ConfigError(f"LOG_FORMAT={form!r} is not a format: use text or json")
    handler = _Handler(sys.stderr)
    handler.setFormatter(JsonFormatter() if form == "json" else TextFormatter())
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _Handler)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    # kafka-python logs every connection at INFO; its warnings and errors still show.
    logging.getLogger("kafka").setLevel(max(logging.WARNING, root.level))
