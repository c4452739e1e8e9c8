"""The platform's own bots ("house bots"): seats of a casual table that the platform plays.

Their player ids are `bot-<name>`, a namespace no account may sign up in (identity reserves the
prefix), so a table naming one seats no person. A player may create a casual table of themselves and
house bots without asking anyone (nobody else is committed to it); the house bots' seats are played
by the table's creator's own client or by a service holding the `service:bots` scope.
"""

from __future__ import annotations

from typing import Final

PREFIX: Final = "bot-"
NAMES: Final = ("ada", "ben", "cleo", "dana", "eli", "fay", "gus")  # every seat but one: MAX_SEATS - 1


def is_house_bot(player_id: str) -> bool:
    return player_id.startswith(PREFIX) and player_id[len(PREFIX) :] in NAMES


def house_bots(seats: int) -> list[str]:
    """The player ids of the bots filling `seats` seats beside one person."""
    return [f"{PREFIX}{NAMES[i]}" for i in range(seats - 1)]
