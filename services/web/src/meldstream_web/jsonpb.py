"""Protobuf messages <-> the JSON the browser reads and sends: protobuf's own JSON mapping, field names
as in the .proto and zeros written out, so the app reads the API's shapes unchanged (no second schema)."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message
from rummy.game.v1 import game_service_pb2 as gs


def to_json(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    return out


def action_from_json(value: object) -> gs.Action:
    """An action as the app got it from `legal_actions`; ValueError for anything that is not one."""
    if not isinstance(value, dict):
        raise ValueError("an action is a JSON object")
    try:
        return json_format.ParseDict(value, gs.Action())
    except json_format.ParseError as exc:
        raise ValueError(str(exc)) from None
