"""Length limits on the strings of a request, checked before anything reads them.

gRPC bounds a whole message (4 MB by default), not its fields: without these a 1 MB player id
would be logged, journalled, keyed and echoed in refusals. Each service names a limit for every
string (and bytes) field of its requests, by field name, and documents it in its proto; a test of
each service checks that no request field lacks one. One limit per kind of string, the same in every
service, the gateway and the clients: they are all here.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Final

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from rummy_service.errors import InvalidArgument, quote

PLAYER_ID: Final = 64
GAME_ID: Final = 64
COMMAND_ID: Final = 128
TICKET_ID: Final = 64
TOURNAMENT_ID: Final = 64
PRIVATE_CODE: Final = 64
SEED: Final = 64
"""A tournament's seed, in bytes."""
VARIANT: Final = 32
OPTION_NAME: Final = 64
OPTION_VALUE: Final = 64
"""An option's string value (choices are short words)."""
PERIOD: Final = 16
"""A leaderboard period: `all`, `day:YYYY-MM-DD`, `week:YYYY-Www`."""
DISPLAY_NAME: Final = 64
"""A display name (identity's, a seat's): any printable text up to this; a longer one is refused where
it is set, and shown cut (saying so) wherever one reaches a page or a terminal anyway."""
CHAT_LINE: Final = 500
"""A chat line: any printable text up to this; a longer one is refused."""

_TEXT: Final = (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES)


def text_fields(descriptor: Descriptor) -> set[str]:
    """The limit names of every string and bytes field in messages of this type, nested ones included.

    A field's name, whatever message holds it; a map's keys go by the map's name (`options`: option
    names) and its string values by the map's name + `.value`.
    """
    return set(_text_fields(descriptor, frozenset()))


def _text_fields(descriptor: Descriptor, seen: frozenset[str]) -> list[str]:
    names = []
    seen |= {descriptor.full_name}
    for field in descriptor.fields:
        nested = field.message_type
        if field.type in _TEXT:
            names.append(field.name)
        elif nested is not None and nested.GetOptions().map_entry:
            key, value = nested.fields_by_name["key"], nested.fields_by_name["value"]
            names += [field.name] if key.type in _TEXT else []
            names += [f"{field.name}.value"] if value.type in _TEXT else []
            if value.message_type is not None and value.message_type.full_name not in seen:
                names += _text_fields(value.message_type, seen)
        elif nested is not None and nested.full_name not in seen:
            names += _text_fields(nested, seen)
    return names


@functools.cache
def _has_text(descriptor: Descriptor) -> bool:
    return bool(text_fields(descriptor))


def check_lengths(message: Message, limits: Mapping[str, int]) -> None:
    """INVALID_ARGUMENT `too_long` for the first string or bytes field longer than its limit.

    `limits` is keyed as `text_fields` names the fields. The refusal names the field and both
    lengths, never the value. Messages that hold no string (actions, cards) are not walked.
    """
    for field, value in message.ListFields():
        name, nested = field.name, field.message_type
        repeated = field.is_repeated
        if field.type in _TEXT:
            for i, item in enumerate(value if repeated else [value]):
                _bound(f"{name}[{i}]" if repeated else name, item, limits[name])
        elif nested is None or not _has_text(nested):
            continue
        elif nested.GetOptions().map_entry:
            key_text = nested.fields_by_name["key"].type in _TEXT
            for key, item in value.items():
                if key_text:
                    _bound(f"a key of {name}", key, limits[name])
                if isinstance(item, Message):
                    check_lengths(item, limits)
                elif isinstance(item, str | bytes):
                    _bound(f"{name}[{quote(str(key))}]", item, limits[f"{name}.value"])
        else:
            for item in value if repeated else [value]:
                check_lengths(item, limits)


def _bound(where: str, value: str | bytes, limit: int) -> None:
    if len(value) > limit:
        unit = "characters" if isinstance(value, str) else "bytes"
        raise InvalidArgument("too_long", f"{where} has {len(value)} {unit}; at most {limit}")
