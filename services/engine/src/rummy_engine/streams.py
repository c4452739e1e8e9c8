"""Fan-out of a game's new events to its open streams: one unbounded queue per stream.

An `Update` carries the full rules state after one event; each stream turns it into what its viewer
may see (`views.observe`) at the edge, so no stream can be handed another seat's cards by mistake.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from rummy_contracts.event_format import Logged
from rummy_rules.state import GameState

from rummy_engine.projection import EngineState, actor
from rummy_engine.telemetry import SUBSCRIBERS


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


class Fanout:
    """The open streams of one game. None in a queue ends its stream: the game left this engine."""

    def __init__(self) -> None:
        self._queues: set[asyncio.Queue[Update | None]] = set()

    def open(self) -> asyncio.Queue[Update | None]:
        queue: asyncio.Queue[Update | None] = asyncio.Queue()
        self._queues.add(queue)
        SUBSCRIBERS.inc()
        return queue

    def close(self, queue: asyncio.Queue[Update | None]) -> None:
        if queue in self._queues:
            self._queues.remove(queue)
            SUBSCRIBERS.dec()

    def publish(self, update: Update) -> None:
        for queue in self._queues:
            queue.put_nowait(update)

    def end(self) -> None:
        for queue in self._queues:
            queue.put_nowait(None)

    def __len__(self) -> int:
        return len(self._queues)
