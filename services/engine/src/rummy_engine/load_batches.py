"""Game loads asked for together go to the log together.

After a takeover every client of the dead engine's games asks for its game within a second, and the
survivor resumes the rest: a hundred loads. One by one, each was a snapshot read and a read of its
partition's tail from the one log reader, about 12 ms each on this box, so the last game could move
1.2 s after the claim. Here a load waits while BATCHES_AT_ONCE reads are under way, and every load
that waited goes in the next read (`CatchUpReader.load_many`: each partition read once for all of
its games). A load with nothing ahead of it starts at once, alone, as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Final, Generic, TypeVar

T = TypeVar("T")
BATCHES_AT_ONCE: Final = 2  # reads under way at once: one forming while the other reads
MOST_PER_BATCH: Final = 256  # games in one read, bounding its memory and how long its first waits
FEW: Final = 8  # background games in one read: a client's load is never long behind one


class LoadBatcher(Generic[T]):
    """`load(game_id)` through `load_many(game_ids)` (run by `run`, e.g. in the store's executor).

    A load some client waits for goes first; a `background` one (a takeover resuming the open games
    for their timers) only when none waits, a few at a time, so a client's game never waits behind
    a hundred games nobody asked for."""

    def __init__(
        self,
        load_many: Callable[[Sequence[str]], dict[str, T]],
        run: Callable[[Callable[[Sequence[str]], dict[str, T]], list[str]], Awaitable[dict[str, T]]],
    ) -> None:
        self._load_many = load_many
        self._run = run
        self._waiting: dict[str, asyncio.Future[T]] = {}  # asked for by a client
        self._background: dict[str, asyncio.Future[T]] = {}
        self._readers: set[asyncio.Task[None]] = set()

    async def load(self, game_id: str, *, background: bool = False) -> T:
        future = self._waiting.get(game_id) or self._background.get(game_id)
        if future is None:
            future = asyncio.get_running_loop().create_future()
            (self._background if background else self._waiting)[game_id] = future
        elif not background:
            self.hurry(game_id)
        if len(self._readers) < BATCHES_AT_ONCE:
            reader = asyncio.get_running_loop().create_task(self._read())
            self._readers.add(reader)
            reader.add_done_callback(self._readers.discard)
        return await asyncio.shield(future)  # a caller cancelled leaves the others their answer

    def hurry(self, game_id: str) -> None:
        """A client now waits for a game queued in the background: it goes with the next read."""
        future = self._background.pop(game_id, None)
        if future is not None:
            self._waiting[game_id] = future

    async def _read(self) -> None:
        while self._waiting or self._background:
            queue, most = (self._waiting, MOST_PER_BATCH) if self._waiting else (self._background, FEW)
            batch = {game_id: queue.pop(game_id) for game_id in list(queue)[:most]}
            try:
                loaded = await self._run(self._load_many, list(batch))
            except Exception as exc:  # the read failed: every load of it fails alike
                for future in batch.values():
                    if not future.done():
                        future.set_exception(exc)
                continue
            for game_id, future in batch.items():
                if not future.done():
                    future.set_result(loaded[game_id])
