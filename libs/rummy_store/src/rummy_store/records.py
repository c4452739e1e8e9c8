"""Values that go into and come out of an event log."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, order=True)
class LogPosition:
    """Where a record sits: a partition and the offset within it (Kafka offsets; sqlite mirrors them)."""

    partition: int
    offset: int


@dataclass(frozen=True, slots=True)
class NewEvent:
    """One event to append. ``payload`` is the serialized envelope; the store reads only these headers."""

    event_type: str
    payload: bytes
    schema_version: int = 1


@dataclass(frozen=True, slots=True)
class EventRecord:
    """An appended event with the metadata the store keeps beside the payload."""

    game_id: str
    seq: int  # 1-based, gap-free per game
    command_id: str
    event_type: str
    schema_version: int
    payload: bytes
    position: LogPosition


@dataclass(frozen=True, slots=True)
class AppendResult:
    """What an append wrote; ``duplicate``: the command id was already in the log, nothing was added."""

    game_id: str
    first_seq: int
    last_seq: int
    positions: tuple[LogPosition, ...]
    duplicate: bool = False


@dataclass(frozen=True, slots=True)
class Append:
    """One append of a batch (`EventLog.append_batch`): the arguments of `EventLog.append`."""

    game_id: str
    command_id: str
    expected_seq: int
    events: Sequence[NewEvent]
