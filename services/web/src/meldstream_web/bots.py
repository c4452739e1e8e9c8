"""Bots for the seats a person does not fill (web quick play, `meldstream play`): the SDK's greedy
`BotPlayer`, each a client of the engine like any other, paced so a person can follow the game.

A person must also have time to buy (contract rummy): a card on offer may be bought until the forehand
draws, so a bot about to draw while a person may still buy holds the card on offer for them
(`BuyWindows`), up to `BUY_WAIT_S`, or until they buy or pass. Their pass appends nothing to the game,
so the bot's stream cannot tell it: the client that sent the pass says so (`BuyWindows.answered`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Final

import grpc
from rummy.game.v1 import game_service_pb2 as gs
from rummy_client import GameClient, RpcFailure, convert
from rummy_client.bots import BotPlayer
from rummy_rules.game import buyers
from rummy_rules.variants import variant_named
from rummy_service.tls import PLAINTEXT, Tls

log = logging.getLogger(__name__)

BUY_WAIT_S: Final = 10.0  # how long a bot holds a card on offer for a person who may buy it


class BuyWindows:
    """Per game, the bot holding a card on offer for a person, and the person's answer."""

    def __init__(self, wait_s: float = BUY_WAIT_S) -> None:
        self._wait_s = wait_s
        self._holding: dict[str, asyncio.Event] = {}

    async def hold(self, game_id: str) -> None:
        """Wait until a person answers the offer in `game_id` or the wait is over."""
        answered = self._holding[game_id] = asyncio.Event()
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(answered.wait(), self._wait_s)
        finally:
            if self._holding.get(game_id) is answered:
                del self._holding[game_id]

    def answered(self, game_id: str) -> None:
        """A person bought or passed the card on offer in `game_id`: the bot holding it draws."""
        if (answered := self._holding.get(game_id)) is not None:
            answered.set()


class CourteousBot(BotPlayer):
    """The greedy bot, holding a card on offer for a person before it draws (the forehand's draw
    closes the buy window)."""

    def __init__(self, client: GameClient, game_id: str, seat: int, windows: BuyWindows) -> None:
        super().__init__(client, game_id, seat)
        self._windows = windows

    async def _act(self, view: gs.PlayerView, actions: list[gs.Action]) -> None:
        # The update that made it our turn may be the discard, before the offer that follows it in the
        # same command: the game, asked now, says whether a card is on offer.
        drawing = variant_named(view.variant).buys and view.turn == self._seat and view.phase == gs.PHASE_DRAW
        if drawing and _person_may_buy(await self._client.view(self._game_id, self._seat)):
            await self._windows.hold(self._game_id)
        await super()._act(view, actions)


def _person_may_buy(view: gs.PlayerView) -> bool:
    if not view.HasField("offer") or view.HasField("buy_request") or view.phase != gs.PHASE_DRAW:
        return False
    return any(not view.seats[seat].bot for seat in buyers(convert.position(view)))


async def play_paced(
    engine: str,
    token: str | Callable[[], str],
    game_id: str,
    seat: int,
    pace_s: float,
    *,
    windows: BuyWindows,
    tls: Tls = PLAINTEXT,
) -> gs.PlayerView:
    """Play `seat` to the end of the game as the greedy bot, `pace_s` before each move, holding cards
    on offer for persons through `windows`. A paced game may outlast one token: `token` is then a
    `RenewingToken`."""
    credentials, options = tls.channel_credentials(), tls.channel_options()
    async with GameClient(engine, token, pace_s=pace_s, credentials=credentials, options=options) as client:
        return await CourteousBot(client, game_id, seat, windows).play()


class BotSeats:
    """The bot tasks the gateway runs, by game, and the buy windows they hold for persons; stopped
    with it. `ended(game_id, finished)` is called once every bot of a game stopped: `finished` when
    they played it to its end (not when one failed or was cancelled)."""

    def __init__(self, tls: Tls = PLAINTEXT, ended: Callable[[str, bool], None] | None = None) -> None:
        self._games: dict[str, set[asyncio.Task[gs.PlayerView]]] = {}
        self._failed: set[str] = set()
        self._tls = tls
        self._ended = ended
        self.windows = BuyWindows()

    def start(self, engine: str, token: Callable[[], str], game_id: str, seat: int, pace_s: float) -> None:
        task = asyncio.create_task(
            play_paced(engine, token, game_id, seat, pace_s, windows=self.windows, tls=self._tls)
        )
        self._games.setdefault(game_id, set()).add(task)
        task.add_done_callback(lambda done: self._done(game_id, done))

    def playing(self, game_id: str) -> bool:
        return bool(self._games.get(game_id))

    def games(self) -> list[str]:
        return [game for game, tasks in self._games.items() if tasks]

    def _done(self, game_id: str, task: asyncio.Task[gs.PlayerView]) -> None:
        tasks = self._games.get(game_id, set())
        tasks.discard(task)
        if task.cancelled():
            self._failed.add(game_id)
        elif (error := task.exception()) is not None:
            gone = isinstance(error, RpcFailure) and error.status is grpc.StatusCode.NOT_FOUND
            if not gone:  # a game the engine does not have is over for its bots too
                self._failed.add(game_id)
            log.warning("a bot of game %s stopped: %r", game_id, error)
        if not tasks:
            self._games.pop(game_id, None)
            finished = game_id not in self._failed
            self._failed.discard(game_id)
            if self._ended is not None:
                self._ended(game_id, finished)

    def cancel(self, game_id: str) -> None:
        """Stop the bots of `game_id` (another replica plays them now)."""
        for task in self._games.get(game_id, set()):
            task.cancel()

    async def stop(self) -> None:
        tasks = [task for game in self._games.values() for task in game]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
