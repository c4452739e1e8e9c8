"""Logging for operators: one line per meaningful fact, as text or JSON, chosen by the environment.

A fact is logged with the standard library and its fields in `extra`:

    log.info("game created", extra={"game_id": game_id, "variant": variant, "players": players})

Text (`LOG_FORMAT=text`, the default) reads `... INFO rummy_engine game created game_id=g1
variant=kalooki players=ann,bob`; JSON (`LOG_FORMAT=json`) writes one object a line with `time`,
`level`, `logger`, `message` and the same fields, for a log pipeline to index. Any attribute a
record carries beyond the standard ones is a field, so modules below this package (rummy_store) log
facts the same way without importing it. Fields are ids, codes and counts: never a token, a secret or
a hidden card.
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

VARIABLES: Final = ("LOG_LEVEL", "LOG_FORMAT")  # what `configure` reads, in every service process
LEVELS: Final = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
FORMATS: Final = ("text", "json")
TEXT_LAYOUT: Final = "%(asctime)s %(levelname)s %(name)s %(message)s"
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
    """A field value as text: sequences joined by commas, a string with spaces or quotes quoted."""
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value) if isinstance(value, set | frozenset) else value
        return ",".join(str(item) for item in items)
    text = str(value)
    if not text or any(c in text for c in ' "=\n'):
        return json.dumps(text)
    return text


class TextFormatter(logging.Formatter):
    """`time LEVEL logger message key=value ...`: for people reading a terminal."""

    def __init__(self) -> None:
        super().__init__(TEXT_LAYOUT)

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        extra = fields(record)
        if not extra:
            return line
        head, newline, trace = line.partition("\n")  # fields stay on the fact's line, before a traceback
        pairs = " ".join(f"{key}={_text(value)}" for key, value in extra.items())
        return f"{head} {pairs}{newline}{trace}"


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (UTC, ISO 8601), level, logger, message, the fields, any traceback."""

    def format(self, record: logging.LogRecord) -> str:
        at = dt.datetime.fromtimestamp(record.created, dt.UTC)
        line: dict[str, Any] = {
            "time": at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in fields(record).items():
            line.setdefault(key, sorted(value) if isinstance(value, set | frozenset) else value)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


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
