"""The Kafka record format of an event log (key = stream id, headers = what readers route on), both ways.

Decoding never raises: a record another tool wrote without a key or the four headers is reported once
(topic, partition, offset, reason) and skipped, so one poison record cannot stop a reader.
"""

from __future__ import annotations

import logging
from typing import Any

from rummy_store.records import EventRecord, LogPosition, NewEvent

log = logging.getLogger("rummy_store")
HEADERS = ("event-type", "schema-version", "seq", "command-id")


def headers(event: NewEvent, seq: int, command_id: str) -> list[tuple[str, bytes]]:
    return [
        ("event-type", event.event_type.encode()),
        ("schema-version", str(event.schema_version).encode()),
        ("seq", str(seq).encode()),
        ("command-id", command_id.encode()),
    ]


class Skipped:
    """Counts the records readers of this process skipped as unreadable (a gauge for operators and tests)."""

    count = 0


def decode(message: Any) -> EventRecord | None:
    """The record as an `EventRecord`, or None (logged, counted) when it is not one."""
    try:
        values = {key: value.decode() for key, value in message.headers or ()}
        if message.key is None or not message.key:
            raise ValueError("no key")
        missing = [name for name in HEADERS if name not in values]
        if missing:
            raise ValueError(f"no {', '.join(missing)} header")
        return EventRecord(
            game_id=message.key.decode(),
            seq=int(values["seq"]),
            command_id=values["command-id"],
            event_type=values["event-type"],
            schema_version=int(values["schema-version"]),
            payload=message.value if message.value is not None else b"",
            position=LogPosition(message.partition, message.offset),
        )
    except (ValueError, UnicodeDecodeError) as exc:
        Skipped.count += 1
        log.warning(
            "skipped unreadable record %s[%d]@%d: %s", message.topic, message.partition, message.offset, exc
        )
        return None
