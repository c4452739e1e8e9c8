"""Server-sent events: the gateway's one push channel.

Why SSE rather than WebSocket: everything the browser sends is a request with an answer (a move is
accepted or refused with the rule's message), and everything pushed is one-way (a game's updates, a
ticket's state), which is what an `EventSource` is for. It is plain HTTP (no upgrade, no extra
package), and it reconnects by itself sending `Last-Event-ID`, the last update's seq, which maps
straight onto the engine streams' `after_seq`: a dropped connection resumes without a gap.

Every stream sends a comment line (`: keep-alive`) after `HEARTBEAT_S` without a message, so a proxy
or load balancer with an idle timeout (nginx's 60 s, many clouds' 60-350 s) never cuts a quiet game
or ticket: `EventSource` ignores comments.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any, Final

from starlette.responses import StreamingResponse

HEARTBEAT_S: Final = 15.0
KEEP_ALIVE: Final = ": keep-alive\n\n"


def message(data: Any, *, event: str = "", event_id: int | None = None) -> str:
    lines = []
    if event:
        lines.append(f"event: {event}")
    if event_id is not None:
        lines.append(f"id: {event_id}")
    lines.append(f"data: {json.dumps(data, separators=(',', ':'))}")
    return "\n".join(lines) + "\n\n"


async def with_heartbeats(messages: AsyncIterator[str], every_s: float) -> AsyncIterator[str]:
    """`messages`, with `KEEP_ALIVE` whenever none came for `every_s`. The pending next message is
    waited on across heartbeats (never cancelled, so the source loses nothing), and the source is
    closed with the stream."""
    source = aiter(messages)
    pending: asyncio.Future[str] | None = None
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(anext(source))
            done, _ = await asyncio.wait({pending}, timeout=every_s)
            if not done:
                yield KEEP_ALIVE
                continue
            try:
                item = pending.result()
            except StopAsyncIteration:
                return
            pending = None
            yield item
    finally:
        if pending is not None and not pending.done():
            pending.cancel()
            with contextlib.suppress(BaseException):
                await pending
        closing = getattr(source, "aclose", None)
        if closing is not None:
            with contextlib.suppress(Exception):
                await closing()


def stream(messages: AsyncIterator[str], heartbeat_s: float | None = None) -> StreamingResponse:
    """An event stream of `messages`, with a heartbeat every `heartbeat_s` (default `HEARTBEAT_S`)."""
    return StreamingResponse(
        with_heartbeats(messages, HEARTBEAT_S if heartbeat_s is None else heartbeat_s),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
