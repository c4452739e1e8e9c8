"""States, events and commands to and from JSON-compatible dicts; `from_dict(to_dict(x)) == x`.

Cards are written in the shared notation, enums by value, bytes as hex, tuples as lists; every
dataclass carries its class name under "type", so a stored event or snapshot decodes without
knowing its kind in advance. The wire format for services lives in protos/, not here.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from enum import Enum
from typing import Any, Final

from rummy_rules import commands, events, melds, options, rules, state, views
from rummy_rules.cards import Card, parse_card
from rummy_rules.errors import RuleViolation


def _is_record(cls: type[Any]) -> bool:
    """A frozen dataclass or a typed NamedTuple (the game state)."""
    return dataclasses.is_dataclass(cls) or (issubclass(cls, tuple) and hasattr(cls, "_fields"))


_MODULES: Final = (events, commands, state, melds, options, rules, views)
_TYPES: Final[dict[str, type[Any]]] = {
    name: obj
    for module in _MODULES
    for name, obj in vars(module).items()
    if isinstance(obj, type) and _is_record(obj) and obj.__module__ == module.__name__
}


_RECORDS: Final = frozenset(_TYPES.values())


def _known(cls: type[Any]) -> bool:
    """Whether instances of `cls` encode as records; a record a variant keeps outside the modules
    above (its options class, its part of the game state: `state.VariantState`) is learnt when first met."""
    if _TYPES.get(cls.__name__) is cls:
        return True
    if issubclass(cls, options.VariantOptions) or state.VARIANT_STATES.get(cls.__name__) is cls:
        _TYPES[cls.__name__] = cls
        return True
    return False


def _type_named(name: str) -> type[Any]:
    known = _TYPES.get(name) or state.VARIANT_STATES.get(name)
    if known is not None:
        return known
    for cls in options.VariantOptions.__subclasses__():
        if cls.__name__ == name:
            _TYPES[name] = cls
            return cls
    raise KeyError(f"no record type {name!r}")


def _field_names(cls: type[Any]) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        if dataclasses.is_dataclass(cls):
            names = tuple(f.name for f in dataclasses.fields(cls))
        else:
            names = cls._fields
        _FIELD_NAMES[cls] = names
    return names


_FIELD_NAMES: dict[type[Any], tuple[str, ...]] = {}


def to_dict(obj: Any) -> dict[str, Any]:
    """Encode a state, event, command, view or rules object as JSON-compatible data."""
    if isinstance(obj, type) or not _known(type(obj)):
        raise RuleViolation("not_serializable", f"cannot encode {type(obj).__name__}")
    encoded = _encode(obj)
    assert isinstance(encoded, dict)
    return encoded


def _encode(value: Any) -> Any:
    if isinstance(value, Card):
        return value.text
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, bytes):
        return value.hex()
    if _TYPES.get(type(value).__name__) is type(value) or (
        isinstance(value, options.VariantOptions | state.VariantState) and _known(type(value))
    ):
        out: dict[str, Any] = {"type": type(value).__name__}
        for name in _field_names(type(value)):
            out[name] = _encode(getattr(value, name))
        return out
    if isinstance(value, tuple | list):
        return [_encode(item) for item in value]
    return value


def from_dict(data: dict[str, Any]) -> Any:
    """Decode what `to_dict` produced; raises RuleViolation on anything malformed."""
    try:
        return _decode_object(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise RuleViolation("malformed_data", f"cannot decode: {exc}") from None


_HINTS: dict[str, dict[str, Any]] = {}


def _hints(cls: type[Any]) -> dict[str, Any]:
    hints = _HINTS.get(cls.__name__)
    if hints is None:
        hints = _HINTS[cls.__name__] = typing.get_type_hints(cls)
    return hints


def _decode_object(data: Any) -> Any:
    if not isinstance(data, dict):
        raise TypeError(f"expected an object, got {data!r}")
    cls = _type_named(data["type"])
    hints = _hints(cls)
    # A field added later with a default may be absent from older records (meldstream M1's).
    kwargs = {name: _decode(hints[name], data[name]) for name in _field_names(cls) if name in data}
    return cls(**kwargs)


def _decode(hint: Any, value: Any) -> Any:
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return None
        if isinstance(value, dict):
            return _decode_object(value)
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _decode(option, value)
            except (KeyError, TypeError, ValueError) as exc:
                errors.append(exc)
        raise ValueError(f"{value!r} matches none of {hint}: {errors}")
    if origin is tuple:
        args = typing.get_args(hint)
        if not isinstance(value, list):
            raise TypeError(f"expected a list, got {value!r}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], item) for item in value)
        return tuple(_decode(arg, item) for arg, item in zip(args, value, strict=True))
    if hint is Card:
        if not isinstance(value, str):
            raise TypeError(f"expected a card, got {value!r}")
        return parse_card(value)
    if hint is bytes:
        return bytes.fromhex(value)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return hint(value)
    if hint in _RECORDS:
        return _decode_object(value)
    if hint in (int, str, bool):
        if type(value) is not hint:
            raise TypeError(f"expected {hint.__name__}, got {value!r}")
        return value
    if hint is typing.Any:
        return value
    raise TypeError(f"no decoder for {hint}")
