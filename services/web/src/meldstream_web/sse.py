"""Server-sent events: the gateway's one push channel.

Why SSE rather than WebSocket: everything the browser sends is a request with an answer (a move is
accepted or refused with the rule's message), and everything pushed is one-way (a game's updates, a
ticket's state), which is what an `EventSource` is for. It is plain HTTP (no upgrade, no extra
package), and it reconnects by itself sending `Last-Event-ID`, the last update's seq, which maps
straight onto the engine streams' `after_seq`: a dropped connection resumes without a gap.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import StreamingResponse


def message(data: Any, *, event: str = "", event_id: int | None = None) -> str:
    lines = []
    if event:
        lines.append(f"event: {event}")
    if event_id is not None:
        lines.append(f"id: {event_id}")
    lines.append(f"data: {json.dumps(data, separators=(',', ':'))}")
    return "\n".join(lines) + "\n\n"


def stream(messages: AsyncIterator[str]) -> StreamingResponse:
    return StreamingResponse(
        messages,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
