"""The headers every answer of the gateway carries, pages and API alike.

The Content-Security-Policy runs only the app's own script files (no inline script, no eval, no
plugin), so a name that slipped into the page as markup still could not run; `frame-ancestors 'none'`
(and X-Frame-Options for older browsers) keeps the table out of another site's frame, where clicks
could be stolen. The app's JSON is never sniffed as a page, and no address leaves in a Referer (the
event streams' URLs carry the token).
"""

from __future__ import annotations

from typing import Final

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

POLICY: Final = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",  # the page's empty favicon
        "connect-src 'self' blob:",  # blob: the replay's export the page offers for download, read back
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)
HEADERS: Final = {
    "Content-Security-Policy": POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}


class SecurityHeaders:
    """ASGI middleware adding `HEADERS` to every HTTP response, streamed ones (server-sent events) too."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    headers[name] = value
            await send(message)

        await self._app(scope, receive, sending)
