"""Fan-out of a game's new events to its open streams: one bounded queue per stream.

An `Update` carries the full rules state after one event; each stream turns it into what its viewer
may see (`views.observe`) at the edge, so no stream can be handed another seat's cards by mistake.

Publishing never waits: a stream whose queue is full (its client reads slower than the game moves) is
dropped alone, and ends with RESOURCE_EXHAUSTED `slow_reader` once it has sent what it holds; the game
and every other stream go on. Spectators (WatchGame) are bounded per game and per engine
(`Watchers`), refused with RESOURCE_EXHAUSTED `too_many_watchers` and a retry delay past either limit.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Final

from rummy_contracts.event_format import Logged
from rummy_contracts.projection import EngineState, actor
from rummy_rules.state import GameState
from rummy_service.errors import ResourceExhausted
from rummy_service.rate_limits import PUSHBACK_TRAILER, RETRY_TRAILER

from rummy_engine.telemetry import SUBSCRIBERS

WATCHERS_RETRY_MS: Final = 5_000
"""The retry delay a refused spectator is given: long enough for a crowd to thin, short for a person."""


@dataclass(frozen=True, slots=True)
class Update:
    seq: int
    event_type: str  # the GameEvent oneof case, or "view" for a stream's opening full view
    actor: int | None
    by_timer: bool
    state: EngineState
    # False for an event with more of its command after it: the seat's legal actions are listed only on
    # the last (on the others the game has already moved on, and a client acting there is refused).
    settled: bool = True
    # What is built from this update once and sent to every stream (`rendering.stream_update`).
    cache: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def game(self) -> GameState:
        return self.state.game


def update_for(
    seq: int, command_id: str, event: Logged, event_type: str, state: EngineState, *, settled: bool = True
) -> Update:
    """The update for one event, given the state after it (`settled`: no later event of the game yet)."""
    return Update(seq, event_type, actor(event), state.by_engine(command_id), state, settled)


class SlowReader(ResourceExhausted):
    def __init__(self, size: int) -> None:
        super().__init__(
            "slow_reader",
            f"this stream fell {size} updates behind the game and was closed: open it again with "
            "after_seq set to the last seq received",
        )


class TooManyWatchers(ResourceExhausted):
    def __init__(self, where: str, limit: int) -> None:
        super().__init__(
            "too_many_watchers",
            f"{where} has its {limit} spectators: retry in {WATCHERS_RETRY_MS / 1000:g} s",
            ((RETRY_TRAILER, str(WATCHERS_RETRY_MS)), (PUSHBACK_TRAILER, str(WATCHERS_RETRY_MS))),
        )


class Subscription:
    """One stream's updates not sent yet, at most `size` of them."""

    def __init__(self, size: int, *, watcher: bool) -> None:
        self.watcher = watcher
        self._size = size
        self._queue: asyncio.Queue[Update | None] = asyncio.Queue(size)
        self._ended = False  # the game left this engine: the stream ends once the queue is sent
        self._dropped = False  # fell behind: the stream ends with `slow_reader`

    def offer(self, update: Update) -> bool:
        """Queue `update`; False (and the subscription dropped) when the queue is full."""
        try:
            self._queue.put_nowait(update)
            return True
        except asyncio.QueueFull:
            self._dropped = True
            return False

    def end(self) -> None:
        self._ended = True
        if not self._queue.full():  # wakes a stream waiting on an empty queue
            self._queue.put_nowait(None)

    async def next(self) -> Update | None:
        """The next update; None once the game left this engine; `SlowReader` once dropped."""
        if self._dropped:
            raise SlowReader(self._size)
        if self._ended and self._queue.empty():
            return None
        return await self._queue.get()


class Watchers:
    """The spectators' limits: `per_game` streams of one game, `per_engine` of all its games."""

    def __init__(self, per_game: int, per_engine: int) -> None:
        self.per_game = per_game
        self.per_engine = per_engine
        self.open = 0

    def check(self, of_game: int) -> None:
        if of_game >= self.per_game:
            raise TooManyWatchers("this game", self.per_game)
        if self.open >= self.per_engine:
            raise TooManyWatchers("this engine", self.per_engine)


class Fanout:
    """The open streams of one game."""

    def __init__(self) -> None:
        self._subscriptions: set[Subscription] = set()
        self.watchers = 0  # spectators among them
        self._opening: Update | None = None

    def opening(self, seq: int, state: EngineState) -> Update:
        """The opening full view at `seq`, one for every stream opened before the game moves on: a
        crowd of spectators arriving at once shares one render of it (`Update.cache`), not one each."""
        if self._opening is None or self._opening.seq != seq or self._opening.state is not state:
            self._opening = Update(seq, "view", None, False, state)
        return self._opening

    def open(self, size: int, *, watcher: bool) -> Subscription:
        subscription = Subscription(size, watcher=watcher)
        self._subscriptions.add(subscription)
        self.watchers += watcher
        SUBSCRIBERS.inc()
        return subscription

    def close(self, subscription: Subscription) -> None:
        if subscription in self._subscriptions:
            self._subscriptions.remove(subscription)
            self.watchers -= subscription.watcher
            SUBSCRIBERS.dec()

    def publish(self, update: Update) -> None:
        """Queue `update` for every stream, never waiting: a stream with a full queue is dropped."""
        full = [s for s in self._subscriptions if not s.offer(update)]
        for subscription in full:
            self.close(subscription)

    def end(self) -> None:
        """The game left this engine: each stream ends after what it holds (`not_owner`)."""
        for subscription in self._subscriptions:
            subscription.end()

    def __len__(self) -> int:
        return len(self._subscriptions)
