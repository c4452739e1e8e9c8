"""Personal API tokens and bot accounts from the browser: the account page's calls, each one call of
identity made with the caller's own access token (its session cookies, CSRF-checked for a change, or
its bearer header), as `meldstream accounts create-bot|create-token|tokens|revoke-token` make them.

Identity decides who may hold which token (a person's own: play, watch; one of its bots': bot:play,
watch; guests and bots none) and answers its refusal, passed on as any other. The gateway only bounds
what it is sent before it reads it (the body's bytes, then each field's characters, identity's own
limits), so a megabyte of label is refused here with the field's name, never forwarded or echoed. A
token's secret is in the one answer that creates it (`Cache-Control: no-store`); no list shows it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import grpc
from rummy.identity.v1 import identity_pb2 as idp
from rummy_client import RpcFailure
from rummy_client.identity import IdentityClient
from rummy_service import auth
from rummy_service.limits import DISPLAY_NAME, PLAYER_ID
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from meldstream_web.api import BadRequest
from meldstream_web.sessions import Sessions

MAX_BODY: Final = 4096
"""Bytes of a JSON body: the largest valid one (a bot's name and display name, or a label and its
scopes) is a few hundred."""
LIMITS: Final[Mapping[str, int]] = {
    "name": 64,  # an account name as typed (identity's names.MAX_INPUT_CHARS: 3-24 once normalized)
    "display_name": DISPLAY_NAME,
    "label": 64,  # identity's LABEL_CHARS
    "bot": PLAYER_ID,  # an account id
    "token_id": 64,
    "scope": 32,
}
MAX_SCOPES: Final = 4
PERSON_SCOPES: Final = (auth.PLAY, auth.WATCH)
BOT_SCOPES: Final = (auth.BOT_PLAY, auth.WATCH)
"""The scopes identity lets a person's own tokens and its bots' tokens carry (rummy_identity.accounts
PERSON_SCOPES, BOT_SCOPES), for the page's choices; identity still refuses any other (`bad_scope`)."""
NO_STORE: Final = {"Cache-Control": "no-store"}


@dataclass(frozen=True, slots=True)
class TokenPages:
    """The handlers of /api/tokens and /api/bots."""

    sessions: Sessions
    identity: IdentityClient

    async def _token(self, request: Request) -> str:
        """The caller's access token, asked first: a stranger's body is not even read."""
        return (await self.sessions.caller(request)).token

    async def _call(self, token: str, method: str, message: object) -> Any:
        """`method` at identity as the caller (a blocking client: in a thread)."""
        try:
            return await asyncio.to_thread(self.identity.call, method, message, token)
        except grpc.RpcError as error:
            raise RpcFailure(error.code(), error.details() or "") from None

    async def list_tokens(self, request: Request) -> Response:
        """The tokens of the caller (or of its bot `?bot=ID`), newest first, and the scopes a new one
        may carry; never a secret. Identity records no last use: none is listed."""
        token = await self._token(request)
        bot = _bounded(request.query_params.get("bot", ""), "bot")
        reply = await self._call(token, "ListApiTokens", idp.ListApiTokensRequest(account_id=bot))
        return JSONResponse(
            {
                "bot": bot,
                "scopes": list(BOT_SCOPES if bot else PERSON_SCOPES),
                "tokens": _tokens(reply.tokens),
            },
            headers=NO_STORE,
        )

    async def create_token(self, request: Request) -> Response:
        """A new token: `{"label", "scopes": [...], "bot"?}`; its secret is in this answer only."""
        token = await self._token(request)
        body = await small_json(request)
        scopes = body.get("scopes", [])
        if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
            raise BadRequest("scopes is a list of scope names")
        if len(scopes) > MAX_SCOPES:
            raise BadRequest(f"at most {MAX_SCOPES} scopes", code="too_long")
        message = idp.CreateApiTokenRequest(
            account_id=_text(body, "bot"),
            label=_text(body, "label"),
            scopes=[_bounded(scope, "scope") for scope in scopes],
        )
        created = await self._call(token, "CreateApiToken", message)
        return JSONResponse(
            {"api_token": created.api_token, "token": _tokens([created.token])[0]}, headers=NO_STORE
        )

    async def revoke_token(self, request: Request) -> Response:
        """Revoke `{token_id}` (of the bot `?bot=ID`): its next exchange at identity is refused."""
        token = await self._token(request)
        token_id = _bounded(request.path_params["token_id"], "token_id")
        bot = _bounded(request.query_params.get("bot", ""), "bot")
        await self._call(
            token, "RevokeApiToken", idp.RevokeApiTokenRequest(account_id=bot, token_id=token_id)
        )
        return JSONResponse({"revoked": token_id})

    async def create_bot(self, request: Request) -> Response:
        """A bot account owned by the caller: `{"name", "display_name"?}`; its tokens are made next."""
        token = await self._token(request)
        body = await small_json(request)
        message = idp.CreateBotAccountRequest(
            name=_text(body, "name"), display_name=_text(body, "display_name")
        )
        account: idp.Account = (await self._call(token, "CreateBotAccount", message)).account
        return JSONResponse(
            {"bot": account.account_id, "name": account.name, "display_name": account.display_name}
        )


async def small_json(request: Request, limit: int = MAX_BODY) -> dict[str, Any]:
    """The body as a JSON object, read only up to `limit` bytes (413 `too_large` past it)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BadRequest(f"the body has {declared} bytes; at most {limit}", 413, "too_large")
    data = b""
    async for chunk in request.stream():
        data += chunk
        if len(data) > limit:
            raise BadRequest(f"the body has more than {limit} bytes", 413, "too_large")
    try:
        body = json.loads(data or b"{}")
    except ValueError:
        raise BadRequest("the body is not JSON") from None
    if not isinstance(body, dict):
        raise BadRequest("the body is a JSON object")
    return body


def _bounded(value: str, field: str) -> str:
    limit = LIMITS[field]
    if len(value) > limit:
        raise BadRequest(f"{field} has {len(value)} characters; at most {limit}", code="too_long")
    return value


def _text(body: Mapping[str, Any], field: str) -> str:
    value = body.get(field, "")
    if not isinstance(value, str):
        raise BadRequest(f"{field} is a string")
    return _bounded(value, field)


def _tokens(tokens: Any) -> list[dict[str, Any]]:
    return [
        {"token_id": t.token_id, "label": t.label, "scopes": list(t.scopes), "created_at": t.created_at}
        for t in tokens
    ]
