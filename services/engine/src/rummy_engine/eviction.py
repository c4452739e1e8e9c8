"""Which loaded games to drop from memory: finished ones after a grace, idle ones, and the LRU beyond a cap.

Dropping a game loses nothing: the log is the truth and the next call reloads it from its snapshot
plus the log's tail. A game is pinned while something in this process depends on its object: an open
stream (it listens to the game's fan-out), a pending turn timer (nobody else would play the absent
seat) or a command in progress (its lock is held). Pinned games are never dropped, so the cap bounds
the games nobody is using; games in play are as many as are being played.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    max_games: int  # loaded games kept beyond this are dropped least recently used first
    idle_s: float  # an unfinished game unused this long is dropped
    finished_grace_s: float  # a finished game unused this long is dropped (late replays and views)


@dataclass(frozen=True, slots=True)
class Resident:
    """What the policy needs to know of one loaded game."""

    game_id: str
    used: float  # last call or event, on the engine's clock
    over: bool
    pinned: bool


def to_evict(games: Iterable[Resident], now: float, limits: Limits) -> list[str]:
    """The game ids to drop; `games` in least-recently-used-first order."""
    games = list(games)
    dropped = [
        game.game_id
        for game in games
        if not game.pinned and now - game.used >= (limits.finished_grace_s if game.over else limits.idle_s)
    ]
    excess = len(games) - len(dropped) - limits.max_games
    chosen = set(dropped)
    for game in games:
        if excess <= 0:
            break
        if not game.pinned and game.game_id not in chosen:
            dropped.append(game.game_id)
            excess -= 1
    return dropped
