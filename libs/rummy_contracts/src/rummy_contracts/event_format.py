"""The event format of a game's log: its version, its events <-> `GameEvent`, and the check on reading.

The engine writes a game's records; the engine itself (catch-up, history), the CLI (replay, verify),
scoring and the web gateway's export read them. Each reads through `message_of` / `event_of` /
`event_from_pb`, which refuse a record or envelope of another event format (`OtherEventFormat`), or
checks `check_format` first where one stray record must be skipped rather than stop the reader.

Events are mapped by name and field type (a rules event `CardDrawn` is the oneof case `card_drawn`,
message `CardDrawn`, field for field; the engine's own facts in `facts.py` likewise), so an event
added to both sides needs no code here; a test walks every oneof case. Cards, melds and options
inside events use `wire`.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Iterable
from typing import Any, Final

from rummy.game.v1 import events_pb2 as ev
from rummy_rules import events
from rummy_store import EventRecord
from rummy_store.config_errors import OtherFormat

from rummy_contracts import facts
from rummy_contracts.wire import CodecError, case_name, decode_field, encode_field, type_hints

SCHEMA_VERSION: Final = 2
"""The event format of a game's records (header `schema-version`, `GameEvent.schema_version`).

2: seq 2 is `TableSeated`, turn timeouts and away seats are facts, `GameStarted` holds only the seed
commitment (the engine derives the seed). 1: players in the first command id, timeouts and away seats
in command ids, a random seed in `GameStarted`. A format-1 game cannot be continued (its players are
in no event and its seed is not the one the engine derives), so its records are refused.
"""


class OtherEventFormat(OtherFormat):
    """A store written by a meldstream of another event format: start from a new store.

    `reason` is the short form, for a reader that skips one such record and goes on.
    """

    def __init__(self, where: str, version: int) -> None:
        super().__init__(
            where,
            version,
            what="event format",
            current=SCHEMA_VERSION,
            lost="games",
            remedy="delete the embedded store's directory (default .local/engine; `meldstream run` keeps "
            "matchmaking and scoring beside it in .local) or choose another with --data-dir / "
            "ENGINE_DATA_DIR; on Kafka, use a new --topic / ENGINE_TOPIC.",
        )
        self.reason = f"event format {version}; this meldstream reads format {SCHEMA_VERSION}"


def check_format(record: EventRecord, where: str = "") -> None:
    """`OtherEventFormat` unless this build's event format wrote `record` (its `schema-version`
    header); `where` names the store or game in the message, by default the record's game and seq."""
    if record.schema_version != SCHEMA_VERSION:
        raise OtherEventFormat(where or f"game {record.game_id!r} (seq {record.seq})", record.schema_version)


# --- events: by name and field type ----------------------------------------------------------------


Logged = events.Event | facts.Fact
"""What a game's stream holds: rules events and the engine's facts."""

EVENT_CLASSES: Final[dict[str, type[Any]]] = {
    case_name(cls.__name__): cls for cls in (*typing.get_args(events.Event), *typing.get_args(facts.Fact))
}
"""oneof case name -> event class, for every rules event and engine fact."""


def rules_events(logged: Iterable[Logged]) -> list[events.Event]:
    """The rules events of a stream, in order (what `rummy_rules.game.replay` folds)."""
    return [event for event in logged if not isinstance(event, facts.Fact)]


def event_to_pb(event: Logged, envelope: ev.GameEvent) -> ev.GameEvent:
    """Fill `envelope`'s oneof case from a rules event or engine fact (the envelope is the caller's)."""
    cls = type(event)
    case = case_name(cls.__name__)
    body = getattr(envelope, case)
    body.SetInParent()
    on_wire = body.DESCRIPTOR.fields_by_name
    for field in dataclasses.fields(cls):
        value = getattr(event, field.name)
        if field.name not in on_wire:
            # A rules field events.proto does not carry yet: its default is lossless (the decoder
            # restores it); any other value cannot be logged, so the command is refused instead.
            if value == field.default:
                continue
            raise CodecError(f"{cls.__name__}.{field.name}={value!r} has no field in events.proto")
        encode_field(body, field.name, type_hints(cls)[field.name], value)
    return envelope


def event_from_pb(envelope: ev.GameEvent) -> Logged:
    """The event an envelope carries (read from a record or from GetHistory); `OtherEventFormat` when
    another event format wrote it, CodecError for a case neither the rules nor the engine know."""
    if envelope.schema_version != SCHEMA_VERSION:
        raise OtherEventFormat(f"game {envelope.game_id!r} (seq {envelope.seq})", envelope.schema_version)
    case = envelope.WhichOneof("event")
    cls = EVENT_CLASSES.get(case or "")
    if cls is None:
        raise CodecError(f"no rules event for case {case!r}")
    body = getattr(envelope, case or "")
    hints = type_hints(cls)
    on_wire = body.DESCRIPTOR.fields_by_name
    values = {
        f.name: decode_field(body, f.name, hints[f.name])
        for f in dataclasses.fields(cls)
        if f.name in on_wire or f.default is dataclasses.MISSING  # a missing field keeps its default
    }
    event: Logged = cls(**values)
    return event


def envelope(
    game_id: str, seq: int, command_id: str, event: Logged, occurred_at: float, *, digest: str = ""
) -> ev.GameEvent:
    message = ev.GameEvent(
        game_id=game_id, seq=seq, command_id=command_id, schema_version=SCHEMA_VERSION, command_digest=digest
    )
    message.occurred_at.FromNanoseconds(int(occurred_at * 1e9))
    return event_to_pb(event, message)


def message_of(record: EventRecord) -> ev.GameEvent:
    """A record's envelope; `OtherEventFormat` when another event format wrote it."""
    check_format(record)
    return ev.GameEvent.FromString(record.payload)


def event_of(record: EventRecord) -> Logged:
    """A record's event (rules event or fact); `OtherEventFormat` when another event format wrote it."""
    return event_from_pb(message_of(record))


def event_type(event: Logged) -> str:
    """The oneof case name of an event (also the log's `event-type` header)."""
    return case_name(type(event).__name__)
