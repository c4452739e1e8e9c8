"""What a quick game against bots is, for the web lobby and `meldstream play` alike: the bots' names,
and the shortest match each variant's options allow (kalooki is one deal anyway)."""

from __future__ import annotations

from typing import Final

BOT_PREFIX: Final = "bot-"  # the player ids of bots; a person may not sign in with one
BOT_NAMES: Final = ("ada", "ben", "cleo", "dana", "eli", "fay", "gus")  # a table of 8 at most
# Options of a short match, and how the lobby says it.
SHORT_MATCH: Final[dict[str, tuple[dict[str, int | bool | str], str]]] = {
    "rummy40": ({"deals_per_match": 1}, "one deal"),
    "rummy500": ({"target_score": 100}, "to 100 points"),
    "contract": ({"last_round": 1}, "round 1 only"),
}


def bot_names(seats: int) -> list[str]:
    """The player ids of the bots filling `seats` seats beside one person."""
    return [f"{BOT_PREFIX}{BOT_NAMES[i]}" for i in range(seats - 1)]


def short_options(variant: str) -> dict[str, int | bool | str]:
    """The options of `variant`'s short match (none: its full match is short already)."""
    return dict(SHORT_MATCH.get(variant, ({}, ""))[0])
