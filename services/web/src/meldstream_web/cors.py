"""Cross-origin calls from browser clients to the bot API (/api/v1 and the OpenAPI document), for the
origins the operator lists in WEB_CORS_ORIGINS; none by default. Bearer tokens only: no cookie is
accepted cross-origin (no `Access-Control-Allow-Credentials`), so another site's page can never act
with a person's session. The web app's own routes stay same-origin."""

from __future__ import annotations

from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

PATHS = ("/api/v1/", "/api/openapi.json")


class ApiCors:
    def __init__(self, app: ASGIApp, origins: tuple[str, ...]) -> None:
        self._app = app
        self._cors = CORSMiddleware(
            app,
            allow_origins=origins,
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type"],
            expose_headers=["Retry-After"],
            max_age=600,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        if scope["type"] == "http" and path.startswith(PATHS):
            await self._cors(scope, receive, send)
        else:
            await self._app(scope, receive, send)
