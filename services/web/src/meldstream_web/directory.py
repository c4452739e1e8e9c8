"""Which games a spectator can pick from: the games this gateway saw start (quick play, queued tables,
`meldstream run --demo` tables). The engine's API has no call listing games, so the gateway remembers
ids, and only ids: whether a game is still live is asked of the engine each time the list is read."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

KEPT = 200  # the most recent games remembered


@dataclass(frozen=True, slots=True)
class Listed:
    game_id: str
    variant: str
    players: tuple[str, ...]
    since: float = field(default_factory=time.time)


class LiveGames:
    def __init__(self) -> None:
        self._games: dict[str, Listed] = {}

    def add(self, game_id: str, variant: str, players: list[str] | tuple[str, ...]) -> None:
        self._games.pop(game_id, None)
        self._games[game_id] = Listed(game_id, variant, tuple(players))
        while len(self._games) > KEPT:
            del self._games[next(iter(self._games))]

    def drop(self, game_id: str) -> None:
        self._games.pop(game_id, None)

    def newest_first(self) -> list[Listed]:
        return list(reversed(self._games.values()))
