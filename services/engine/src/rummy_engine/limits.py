"""The length limit of every string field of the engine's requests (documented in game_service.proto).

Checked by the servicer before authentication or any store is touched, so an oversized field costs
one comparison and is refused with INVALID_ARGUMENT `too_long`, naming the field, never quoting it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from google.protobuf.message import Message
from rummy_service import limits
from rummy_service.limits import DISPLAY_NAME, OPTION_NAME, OPTION_VALUE, PLAYER_ID, VARIANT

from rummy_engine.seeds import CONTRIBUTED_MAX

GAME_ID: Final = limits.GAME_ID  # the app checks a game id's pattern up to it
COMMAND_ID: Final = limits.COMMAND_ID

FIELDS: Final[Mapping[str, int]] = {
    "game_id": GAME_ID,
    "command_id": COMMAND_ID,
    "player_ids": PLAYER_ID,
    "player_names": DISPLAY_NAME,
    "variant": VARIANT,
    "options": OPTION_NAME,
    "string_value": OPTION_VALUE,
    "seed": CONTRIBUTED_MAX,  # ContributeSeed's; one too short is `seeds.check_contributed`'s to refuse
}
"""Limits by field name (`rummy_service.limits.text_fields`); `options` limits the option names."""


def check(request: Message) -> None:
    limits.check_lengths(request, FIELDS)
