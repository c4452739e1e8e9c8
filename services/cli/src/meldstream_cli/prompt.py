"""`meldstream play`'s prompt: the seat's clock in it, and the answer read inside the event loop.

The answer used to be read by `input()` in a worker thread, and Ctrl-C then waited for Enter:
`asyncio.run` joins its worker threads at exit, and nothing interrupts a thread blocked in a read.
Here the loop watches stdin (`add_reader`) and reads what the terminal hands over a line at a time,
so Ctrl-C cancels the game at once. The terminal stays in its cooked mode throughout (its own line
editing, echo on), so there is no mode to restore on the way out.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Final

from rich.console import Console
from rummy.game.v1 import game_service_pb2 as gs
from rummy_contracts.catalogue import Words, words

MAX_LINE: Final = 256  # bytes of one answer kept; the rest of a longer line is dropped
CHUNK: Final = 4096
ENGLISH: Final = words()


def clock(view: gs.PlayerView, w: Words = ENGLISH, now: float | None = None) -> str:
    """The time left for the seat to move, as the prompt shows it ("" when no turn timer runs)."""
    if not view.HasField("turn_deadline"):
        return ""
    left = max(0, round(view.turn_deadline.ToMicroseconds() / 1e6 - (time.time() if now is None else now)))
    return w("cli.clock", left=left)


class Lines:
    """The lines typed on file descriptor `fd` (stdin), read as the loop finds them ready."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = b""

    async def ask(self, console: Console, prompt: str) -> str:
        """Show `prompt` and return the next line typed; `EOFError` when the input ends."""
        console.print(prompt, end="")
        while b"\n" not in self._buffer:
            chunk = await self._chunk()
            if not chunk:
                raise EOFError
            self._buffer += chunk
            if len(self._buffer) > MAX_LINE and b"\n" not in self._buffer:
                self._buffer = self._buffer[:MAX_LINE]  # a line too long to be an answer: its start only
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line[:MAX_LINE].decode(errors="replace")

    async def _chunk(self) -> bytes:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        try:
            loop.add_reader(self._fd, _settle, ready)
        except PermissionError:  # a regular file (`play ... < moves`): always ready, and epoll refuses it
            return os.read(self._fd, CHUNK)
        try:
            await ready
        finally:
            loop.remove_reader(self._fd)
        return os.read(self._fd, CHUNK)


def _settle(ready: asyncio.Future[None]) -> None:
    """The reader's callback: the loop may call it again before the reader is removed."""
    if not ready.done():
        ready.set_result(None)
