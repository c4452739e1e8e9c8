"""Newline-delimited JSON streams (one JSON object a line): the bot API's push channel, as the bot
APIs their writers already know use it. A program reads it with any HTTP client, line by line, with
no event-stream parser. A quiet stream sends an empty line every `HEARTBEAT_S` (readers skip empty
lines), so a proxy's idle timeout never cuts a waiting bot."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, Final

from starlette.responses import StreamingResponse

from meldstream_web.sse import KEEP_ALIVE, with_heartbeats

HEARTBEAT_S: Final = 7.0
MEDIA_TYPE: Final = "application/x-ndjson"


def line(data: dict[str, Any]) -> str:
    return json.dumps(data, separators=(",", ":")) + "\n"


async def _lines(items: AsyncIterator[dict[str, Any]]) -> AsyncIterator[str]:
    async for item in items:
        yield line(item)


async def _with_empty_lines(items: AsyncIterator[dict[str, Any]], every_s: float) -> AsyncIterator[str]:
    async for text in with_heartbeats(_lines(items), every_s):
        yield "\n" if text == KEEP_ALIVE else text


def stream(items: AsyncIterator[dict[str, Any]], heartbeat_s: float = HEARTBEAT_S) -> StreamingResponse:
    """An NDJSON stream of `items`, an empty line whenever none came for `heartbeat_s`."""
    return StreamingResponse(
        _with_empty_lines(items, heartbeat_s),
        media_type=MEDIA_TYPE,
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
