"""Private tables from the browser: each handler is one matchmaking call made with the caller's own token.

Matchmaking makes the link token (and the short code) and keeps the table, so any gateway replica
serves any call; the page asks again every second while it waits (a table changes a few times in its
life, a poll is one small call). The gateway bounds what it reads (the body's bytes, each field's
characters) before anything is forwarded; refusals are matchmaking's, passed on with their reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import grpc
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.matchmaking.v1 import matchmaking_pb2_grpc as mm_grpc
from rummy_contracts.wire import option_to_pb
from rummy_service.limits import PLAYER_ID
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from meldstream_web.api import BadRequest
from meldstream_web.jsonpb import to_json
from meldstream_web.quickplay import short_options
from meldstream_web.sessions import Sessions
from meldstream_web.tokens import small_json

LIMITS: Final[Mapping[str, int]] = {
    "table": 32,  # matchmaking's link tokens are 25 characters
    "code": 16,  # short codes are 6
    "player_id": PLAYER_ID,
    "variant": 32,
}
Field = TypeVar("Field", str, int, bool)
KINDS: Final[Mapping[type, str]] = {
    str: "text",
    int: "a whole number from 0 to 2^31-1",
    bool: "true or false",
}
NO_STORE: Final = {"Cache-Control": "no-store"}  # a table's answer names its secret link token


@dataclass(frozen=True, slots=True)
class PrivateTablePages:
    """The handlers of /api/tables."""

    sessions: Sessions
    matchmaking: grpc.aio.Channel

    async def _stub(self, request: Request) -> tuple[Any, tuple[tuple[str, str], ...]]:
        """Matchmaking and the caller's credentials, the caller asked first: a stranger's body is
        not even read."""
        token = (await self.sessions.caller(request)).token
        return mm_grpc.MatchmakingServiceStub(self.matchmaking), (("authorization", f"Bearer {token}"),)

    async def create(self, request: Request) -> Response:
        """A table hosted by the caller: `{"variant", "players", "length": "short"|"full",
        "turn_timeout_ms", "time_bank_ms"?, "short_code": bool}` (no `time_bank_ms`, or null: the
        engine's default bank; matchmaking checks both clocks' bounds)."""
        stub, auth = await self._stub(request)
        body = await small_json(request)
        variant = _bounded(_field(body, "variant", str), "variant")
        message = mm.CreatePrivateTableRequest(
            variant=variant,
            seats=_field(body, "players", int),
            turn_timeout_ms=_field(body, "turn_timeout_ms", int),
            short_code=_field(body, "short_code", bool),
        )
        if body.get("time_bank_ms") is not None:
            message.time_bank_ms = _field(body, "time_bank_ms", int)
        if body.get("length", "full") == "short":
            for name, value in short_options(variant).items():
                message.options[name].CopyFrom(option_to_pb(value))
        return _table(await stub.CreatePrivateTable(message, metadata=auth))

    async def get(self, request: Request) -> Response:
        stub, auth = await self._stub(request)
        message = mm.GetPrivateTableRequest(table_id=_table_id(request))
        return _table(await stub.GetPrivateTable(message, metadata=auth))

    async def join(self, request: Request) -> Response:
        """Take a seat by the link (or ask for one, at a table with a short code)."""
        stub, auth = await self._stub(request)
        message = mm.JoinPrivateTableRequest(table_id=_table_id(request))
        return _table(await stub.JoinPrivateTable(message, metadata=auth))

    async def join_by_code(self, request: Request) -> Response:
        """Ask for a seat by a short code: `{"code"}` (the host approves, or not)."""
        stub, auth = await self._stub(request)
        code = _bounded(_field(await small_json(request), "code", str).strip(), "code")
        message = mm.JoinPrivateTableRequest(short_code=code)
        return _table(await stub.JoinPrivateTable(message, metadata=auth))

    async def approve(self, request: Request) -> Response:
        """The host seats `{"player_id"}`, who asked."""
        stub, auth = await self._stub(request)
        player = _bounded(_field(await small_json(request), "player_id", str), "player_id")
        message = mm.ApprovePrivateSeatRequest(table_id=_table_id(request), player_id=player)
        return _table(await stub.ApprovePrivateSeat(message, metadata=auth))

    async def remove(self, request: Request) -> Response:
        """The host removes `{"player_id"}` (a seat, or a request), or a player leaves their seat."""
        stub, auth = await self._stub(request)
        player = _bounded(_field(await small_json(request), "player_id", str), "player_id")
        message = mm.RemovePrivateSeatRequest(table_id=_table_id(request), player_id=player)
        return _table(await stub.RemovePrivateSeat(message, metadata=auth))

    async def rematch(self, request: Request) -> Response:
        stub, auth = await self._stub(request)
        message = mm.AcceptRematchRequest(table_id=_table_id(request))
        return _table(await stub.AcceptRematch(message, metadata=auth))


def _table(reply: Any) -> Response:
    return JSONResponse(to_json(reply.table), headers=NO_STORE)


def _table_id(request: Request) -> str:
    return _bounded(request.path_params["table"], "table")


def _bounded(value: str, field: str) -> str:
    limit = LIMITS[field]
    if len(value) > limit:
        raise BadRequest(f"{field} has {len(value)} characters; at most {limit}", code="too_long")
    return value


def _field(body: Mapping[str, Any], name: str, kind: type[Field]) -> Field:
    """`body[name]` of JSON type `kind` (a missing one: its zero); a number past 32 bits is refused
    here, not by protobuf's ValueError."""
    value = body.get(name, kind())
    if type(value) is not kind or (isinstance(value, int) and not 0 <= value < 2**31):
        raise BadRequest(f"{name} is {KINDS[kind]}")
    found: Field = value
    return found
