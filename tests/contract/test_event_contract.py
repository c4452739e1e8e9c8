"""The wire contract (protos/rummy/game/v1/events.proto) covers every event the rules engine emits."""

from __future__ import annotations

import re
import typing

from rummy.game.v1 import events_pb2
from rummy_contracts import facts
from rummy_rules import events

CASES = {field.name: field for field in events_pb2.GameEvent.DESCRIPTOR.oneofs_by_name["event"].fields}


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def test_every_engine_event_has_a_oneof_case_of_the_same_name() -> None:
    engine_events = typing.get_args(events.Event)
    assert engine_events, "rummy_rules.events.Event should be a union of event classes"
    for cls in engine_events:
        case = CASES.get(snake(cls.__name__))
        assert case is not None, f"events.proto has no oneof case for {cls.__name__}"
        assert case.message_type is not None and case.message_type.name == cls.__name__


def test_every_engine_event_field_is_in_its_message() -> None:
    for cls in typing.get_args(events.Event):
        message = CASES[snake(cls.__name__)].message_type
        assert message is not None
        proto_fields = set(message.fields_by_name)
        missing = set(cls.__dataclass_fields__) - proto_fields
        assert not missing, f"{cls.__name__}: fields {sorted(missing)} are not in events.proto"


def test_envelope_numbers_never_collide_with_event_cases() -> None:
    envelope = {f.number for f in events_pb2.GameEvent.DESCRIPTOR.fields if f.containing_oneof is None}
    assert envelope.isdisjoint(f.number for f in CASES.values())
    assert {"game_id", "seq", "command_id", "occurred_at", "schema_version"} <= set(
        events_pb2.GameEvent.DESCRIPTOR.fields_by_name
    )


def test_every_oneof_case_is_a_rules_event_or_an_engine_fact() -> None:
    """Cases 10-39 mirror rules events; from 40 the engine's facts (rummy_contracts.facts), field by field."""
    rules = {snake(cls.__name__): cls for cls in typing.get_args(events.Event)}
    engine = {snake(cls.__name__): cls for cls in typing.get_args(facts.Fact)}
    assert set(CASES) == set(rules) | set(engine)
    for name, cls in engine.items():
        case = CASES[name]
        assert case.number >= 40 and case.message_type is not None
        assert set(case.message_type.fields_by_name) == set(cls.__dataclass_fields__), name
    assert all(CASES[name].number < 40 for name in rules)
