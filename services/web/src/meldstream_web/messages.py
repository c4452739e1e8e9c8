"""The message catalogue served to the page at `/i18n/<lang>.json`: the same file the gateway's log in
words and the terminal read (`rummy_contracts.catalogue`), with the table of how each action reads
(`rummy_contracts.action_labels`, under `actions`), which the terminal reads too.

The answer only changes with a release, so browsers and proxies keep it (an hour, then revalidated by
its ETag): switching language costs one request the first time only."""

from __future__ import annotations

import functools
import hashlib
import json

from rummy_contracts import action_labels
from rummy_contracts.catalogue import LANGUAGES, raw
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

CACHE_CONTROL = "public, max-age=3600"


@functools.cache
def _body(lang: str) -> tuple[bytes, str]:
    served = {"lang": lang, "messages": raw(lang), "actions": action_labels.table()}
    body = json.dumps(served, ensure_ascii=False)
    data = body.encode()
    return data, '"' + hashlib.sha256(data).hexdigest()[:32] + '"'


async def catalogue(request: Request) -> Response:
    """One language's catalogue; an unknown language (only looked up, never a path) is a 404."""
    lang = request.path_params["lang"]
    if lang not in LANGUAGES:
        return JSONResponse(
            {"status": "NOT_FOUND", "code": "no_such_language", "message": "no such language"}, 404
        )
    data, etag = _body(lang)
    headers = {"Cache-Control": CACHE_CONTROL, "ETag": etag}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    return Response(data, media_type="application/json", headers=headers)
