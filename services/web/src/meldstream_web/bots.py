"""The bots the gateway seats for quick play: SDK clients like any other, paced for a person to follow.

A bot is the SDK's `BotPlayer` on a `GameClient` with `pace_s`: it waits before each move it sends, so a
person at the table (or watching) sees the moves one at a time instead of the whole round at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from rummy.game.v1 import game_service_pb2 as gs
from rummy_client import GameClient
from rummy_client.bots import BotPlayer
from rummy_service.tls import PLAINTEXT, Tls

log = logging.getLogger(__name__)


async def play_paced(
    engine: str,
    token: str | Callable[[], str],
    game_id: str,
    seat: int,
    pace_s: float,
    *,
    tls: Tls = PLAINTEXT,
) -> gs.PlayerView:
    """Play `seat` to the end of the game as the greedy bot, `pace_s` before each move. A paced game
    may outlast one token: `token` is then a `RenewingToken`."""
    credentials, options = tls.channel_credentials(), tls.channel_options()
    async with GameClient(engine, token, pace_s=pace_s, credentials=credentials, options=options) as client:
        return await BotPlayer(client, game_id, seat).play()


class BotSeats:
    """The bot tasks the gateway runs; stopped with it."""

    def __init__(self, tls: Tls = PLAINTEXT) -> None:
        self._tasks: set[asyncio.Task[gs.PlayerView]] = set()
        self._tls = tls

    def start(self, engine: str, token: Callable[[], str], game_id: str, seat: int, pace_s: float) -> None:
        task = asyncio.create_task(play_paced(engine, token, game_id, seat, pace_s, tls=self._tls))
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[gs.PlayerView]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("a bot stopped: %r", task.exception())

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
