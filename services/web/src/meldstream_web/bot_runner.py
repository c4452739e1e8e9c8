"""Quick-play bots that outlive the gateway replica that seated them.

A quick-play game's bots are SDK clients of the engine (bots.py); the game itself is the engine's, so
any replica can play its bot seats, from the game as it stands. With Redis (REDIS_URL, which every
deployment of several replicas gives its gateways) each game with bots is written to one hash,
`<prefix>web:bots`, with its bot seats and pace, and played by the one replica holding its lease,
`<prefix>web:bots:<game>`: a key naming that replica, set with a `LEASE_MS` expiry and renewed every
`TICK_S` by the replica while its bots play. Every replica looks through the hash as often: a game
whose lease is gone (its replica was killed, or stopped) is claimed by the first replica to set the key
again, which starts the game's bots there; they open the game's stream from its current view and play
on. A killed replica so costs its games' bots at most `LEASE_MS` + `TICK_S` of waiting, well within a
turn's limit, and its players a reconnect of their event streams to another replica.

A game leaves the hash when its bots played it to its end (or the engine no longer has it, or it is
older than `MAX_AGE_S`: bots failing on it for a day are given up). A replica
that finds its lease taken by another stops its bots of that game (it was paused past the lease).
Without Redis (the embedded platform, one gateway) the bots run in the replica that seated them, as
before: nothing else could take them over.

A person's buy or pass may reach another replica than the one running the bot holding the card on
offer for them (bots.BuyWindows): `answered` publishes it on the channel `<prefix>web:bots:answered`,
which every replica follows, so the bot holding it draws at once wherever it runs (without Redis, or
while it is away, that bot waits out `BUY_WAIT_S`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any, Final

import redis.asyncio
from rummy_service.tls import PLAINTEXT, Tls

from meldstream_web.bots import BotSeats

log = logging.getLogger("meldstream_web")

LEASE_MS: Final = 6_000
TICK_S: Final = 2.0
MAX_AGE_S: Final = 24 * 3600  # a game whose bots still have not finished it after this is given up
# Renew only a lease this replica still holds (another may have claimed the game meanwhile).
_RENEW: Final = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) "
    "else return 0 end"
)
_RELEASE: Final = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
)


class BotRunner:
    """Starts the bots of a quick-play game, and with Redis keeps them played by one live replica."""

    def __init__(
        self,
        engine: str,
        token: Callable[[], str] | None,
        redis_url: str = "",
        *,
        prefix: str = "",
        tls: Tls = PLAINTEXT,
        tick_s: float | None = None,
        lease_ms: int | None = None,
    ) -> None:
        self._engine = engine
        self._token = token
        self.seats = BotSeats(tls, ended=self._ended)
        self._games_key = f"{prefix}web:bots"
        self._prefix = prefix
        self._tick_s = TICK_S if tick_s is None else tick_s
        self._lease_ms = LEASE_MS if lease_ms is None else lease_ms
        self.replica = uuid.uuid4().hex[:12]
        self._redis: Any = redis.asyncio.from_url(redis_url, socket_timeout=1.0) if redis_url else None
        self._redis_url = redis_url
        self._answers = f"{prefix}web:bots:answered"
        self._task: asyncio.Task[None] | None = None
        self._listener: asyncio.Task[None] | None = None
        self._pending: set[asyncio.Task[None]] = set()

    @property
    def shared(self) -> bool:
        return self._redis is not None

    def _lease(self, game_id: str) -> str:
        return f"{self._games_key}:{game_id}"

    async def start(self) -> None:
        if self._redis is not None:
            self._task = asyncio.create_task(self._loop())
            self._listener = asyncio.create_task(self._listen())

    async def stop(self) -> None:
        """Stop this replica's bots and give up their leases at once, so another replica takes their
        games without waiting for the leases to expire."""
        for task in (self._task, self._listener):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        games = self.seats.games()
        await self.seats.stop()
        if self._redis is not None:
            for game_id in games:
                with contextlib.suppress(Exception):
                    await self._redis.eval(_RELEASE, 1, self._lease(game_id), self.replica)
            await asyncio.gather(*self._pending, return_exceptions=True)
            with contextlib.suppress(Exception):
                await self._redis.aclose()

    async def seat(self, game_id: str, seats: list[int], pace_s: float) -> None:
        """Play `seats` of the new game `game_id` as bots, here (and recorded, with Redis, so a
        replica takes them over if this one goes)."""
        if self._redis is not None:
            record = json.dumps({"seats": seats, "pace_s": pace_s, "at": int(time.time())})
            try:
                await self._redis.hset(self._games_key, game_id, record)
                await self._redis.set(self._lease(game_id), self.replica, px=self._lease_ms)
            except Exception as exc:  # Redis away: the bots still play here, only not taken over
                log.warning("game %s: its bots are not recorded in Redis (%s)", game_id, exc)
        self._play(game_id, seats, pace_s)

    async def answered(self, game_id: str) -> None:
        """A person bought or passed the card on offer in `game_id`: the bot holding it draws, in this
        replica or (through Redis) in the one running it."""
        self.seats.windows.answered(game_id)
        if self._redis is not None:
            try:
                await self._redis.publish(self._answers, game_id)
            except Exception as exc:  # the bot then waits out its hold
                log.warning("game %s: a buy answer not passed on (%s)", game_id, exc)

    async def _listen(self) -> None:
        """Answers published by any replica, handed to the bots held here (reconnecting while Redis
        is away)."""
        while True:
            listener: Any = redis.asyncio.from_url(self._redis_url)
            try:
                async with listener.pubsub() as channel:
                    await channel.subscribe(self._answers)
                    while True:
                        message = await channel.get_message(ignore_subscribe_messages=True, timeout=5.0)
                        if message is not None and message.get("type") == "message":
                            self.seats.windows.answered(message["data"].decode())
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("buy answers not followed: %s", exc)
                await asyncio.sleep(self._tick_s)
            finally:
                with contextlib.suppress(Exception):
                    await listener.aclose()

    def _play(self, game_id: str, seats: list[int], pace_s: float) -> None:
        assert self._token is not None
        for seat in seats:
            self.seats.start(self._engine, self._token, game_id, seat, pace_s)

    def _ended(self, game_id: str, finished: bool) -> None:
        """Every bot of `game_id` stopped here: played to the end (the game leaves the hash), or
        failed (its lease is given up: a replica, maybe this one, takes it again)."""
        if self._redis is None:
            return
        task = asyncio.get_running_loop().create_task(self._forget(game_id, finished))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _forget(self, game_id: str, finished: bool) -> None:
        try:
            if finished:
                await self._redis.hdel(self._games_key, game_id)
            await self._redis.eval(_RELEASE, 1, self._lease(game_id), self.replica)
        except Exception as exc:
            log.warning("game %s: its bots' lease not released (%s)", game_id, exc)

    async def _loop(self) -> None:
        while True:
            try:
                await self.tick()
            except Exception as exc:  # Redis away: the bots here play on; try again next tick
                log.warning("bot leases not renewed: %s", exc)
            await asyncio.sleep(self._tick_s)

    async def tick(self) -> None:
        """Renew the leases of the games played here, drop those another replica took, and claim any
        game whose lease lapsed."""
        for game_id in self.seats.games():
            renewed = await self._redis.eval(_RENEW, 1, self._lease(game_id), self.replica, self._lease_ms)
            if not renewed and not await self._redis.set(
                self._lease(game_id), self.replica, px=self._lease_ms, nx=True
            ):
                log.warning("game %s: its bots are played by another replica now; stopped here", game_id)
                self.seats.cancel(game_id)
        if self._token is None:
            return  # no credential to play bots with: this replica claims none
        records: dict[bytes, bytes] = await self._redis.hgetall(self._games_key)
        for raw_game, raw in records.items():
            game_id = raw_game.decode()
            if self.seats.playing(game_id):
                continue
            if not await self._redis.set(self._lease(game_id), self.replica, px=self._lease_ms, nx=True):
                continue
            try:
                record = json.loads(raw)
                seats, pace_s = [int(s) for s in record["seats"]], float(record["pace_s"])
                stale = time.time() - float(record.get("at", 0)) > MAX_AGE_S
            except (ValueError, KeyError, TypeError, AttributeError):
                stale = True
            if stale:  # unreadable, or its bots failed to finish it for a day: nobody plays it
                log.warning("game %s: its bots are given up (%.60r)", game_id, raw)
                await self._redis.hdel(self._games_key, game_id)
                await self._redis.delete(self._lease(game_id))
                continue
            log.info("game %s: its bots (seats %s) taken over by this replica", game_id, seats)
            self._play(game_id, seats, pace_s)
