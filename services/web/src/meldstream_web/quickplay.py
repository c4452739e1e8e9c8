"""What a quick game against bots is, for the web lobby and `meldstream play` alike: the shortest match
each variant's options allow (kalooki is one deal anyway). The bots are the house's
(`rummy_contracts.house`)."""

from __future__ import annotations

from typing import Final

# Options of a short match, and how the lobby says it.
SHORT_MATCH: Final[dict[str, tuple[dict[str, int | bool | str], str]]] = {
    "rummy40": ({"deals_per_match": 1}, "one deal"),
    "rummy500": ({"target_score": 100}, "to 100 points"),
    "contract": ({"last_round": 1}, "round 1 only"),
}


def short_options(variant: str) -> dict[str, int | bool | str]:
    """The options of `variant`'s short match (none: its full match is short already)."""
    return dict(SHORT_MATCH.get(variant, ({}, ""))[0])
