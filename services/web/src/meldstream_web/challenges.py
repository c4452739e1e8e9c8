"""Challenges in the bot API (`/api/v1/challenge/...`, Lichess's shape): one account asks another to a
game, which the other accepts or declines (with a reason); the challenger may cancel it first.

A challenge is a private table (matchmaking's, private_tables.py) of two seats that the challenger
hosts, with one difference: its link token never leaves the gateway (challenge_book.py keeps it), so the
only way to the second seat is the challenged account's accept, which joins the table with their own
token; the table's game then starts on both accounts' event streams like any other. The challenge has
an id of its own, 128 random bits, so nobody acts on it by guessing; only the challenged account may
accept or decline it, only the challenger cancel it, and it expires after `TTL_S` undecided.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from rummy.identity.v1 import identity_pb2 as pb
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.matchmaking.v1 import matchmaking_pb2_grpc as mm_grpc
from rummy_contracts.wire import option_to_pb
from rummy_service.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
)
from rummy_service.limits import PLAYER_ID
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from meldstream_web.api import BadRequest, Gateway
from meldstream_web.challenge_book import CREATED, Challenge, ChallengeBook, Decision
from meldstream_web.quickplay import short_options
from meldstream_web.sessions import Caller
from meldstream_web.tokens import small_json

TTL_S: Final = 600.0  # an undecided challenge is gone after 10 minutes (its table's invite: an hour)
MAX_OPEN: Final = 10  # undecided challenges an account may have made at once
PREFIX: Final = "ch-"
LIMITS: Final[Mapping[str, int]] = {
    "account": PLAYER_ID,
    "challenge": len(PREFIX) + 22,  # base64url of 16 bytes
    "variant": 32,
    "option": 64,  # matchmaking's limit on option names and string values
    "reason": 16,
}
MAX_OPTIONS: Final = 16
T = TypeVar("T", str, int)
REASONS: Final = frozenset(  # Lichess's, so a bot written for it declines here as it does there
    {
        "generic",
        "later",
        "tooFast",
        "tooSlow",
        "timeControl",
        "rated",
        "casual",
        "variant",
        "noBot",
        "onlyBot",
    }
)


@dataclass(frozen=True, slots=True)
class Challenges:
    """The handlers of /api/v1/challenge; `gateway` answers the gateway (made when the app starts)."""

    gateway: Callable[[], Gateway]
    book: ChallengeBook

    def _stub(self) -> Any:
        return mm_grpc.MatchmakingServiceStub(self.gateway().matchmaking)

    async def create(self, request: Request) -> Response:
        """`{"variant", "length"? ("short"), "options"?, "turn_timeout_ms"?, "time_bank_ms"?}`: challenge
        the account in the path to a game of two; answers the challenge (`id`, `status` created,
        `expires_at`). No `time_bank_ms` (or null): the engine's default bank."""
        caller = await self.gateway().caller(request)
        me = caller.principal.subject
        challenged = _bounded(request.path_params["account"], "account")
        if challenged == me:
            raise InvalidArgument("self_challenge", "a challenge is for another account")
        body = await small_json(request)
        account = await self.gateway().lookup(caller, pb.LookupAccountRequest(account_id=challenged))
        variant = _bounded(_typed(body, "variant", str, ""), "variant")
        length = _typed(body, "length", str, "short")
        if length not in ("short", "full"):
            raise BadRequest("length is short or full")
        options = {**(short_options(variant) if length == "short" else {}), **_options(body.get("options"))}
        turn = _typed(body, "turn_timeout_ms", int, 0)
        bank = None if body.get("time_bank_ms") is None else _typed(body, "time_bank_ms", int, 0)
        mine = [c for c in await self.book.of_account(me) if c.challenger == me and c.status == CREATED]
        if len(mine) >= MAX_OPEN:
            raise ResourceExhausted(
                "too_many_challenges", f"at most {MAX_OPEN} undecided challenges: cancel one, or wait"
            )
        message = mm.CreatePrivateTableRequest(variant=variant, seats=2, turn_timeout_ms=turn)
        if bank is not None:  # matchmaking checks its bounds
            message.time_bank_ms = bank
        for name, value in options.items():
            message.options[name].CopyFrom(option_to_pb(value))
        reply = await self._stub().CreatePrivateTable(message, metadata=_auth(caller))
        challenge = Challenge(
            id=PREFIX + secrets.token_urlsafe(16),
            table_id=reply.table.table_id,
            challenger=me,
            challenger_name=caller.principal.name,
            challenger_bot=caller.principal.kind == "bot",
            challenged=challenged,
            challenged_name=account.display_name,
            variant=variant,
            options=options,
            turn_timeout_ms=turn,
            time_bank_ms=bank,
            expires_at=min(time.time() + TTL_S, reply.table.expires_at),
        )
        await self.book.add(challenge)
        return JSONResponse(challenge.public(), headers={"Cache-Control": "no-store"})

    async def listed(self, request: Request) -> Response:
        """The caller's challenges of the last `TTL_S`, `{"in": [...], "out": [...]}` as Lichess lists
        them: made to the caller and by it, each with its status (`created`: still to answer; an accepted
        one carries its `game_id`), the newest last."""
        me = (await self.gateway().caller(request)).principal.subject
        mine = await self.book.of_account(me)
        return JSONResponse(
            {
                "in": [c.public() for c in mine if c.challenged == me],
                "out": [c.public() for c in mine if c.challenger == me],
            },
            headers={"Cache-Control": "no-store"},
        )

    async def account(self, request: Request) -> Response:
        """Another account by its name, `{"player", "name", "display_name", "kind"}`, to challenge it
        (identity's LookupAccount: 404 `no_account` alike for a name never used and an account that may
        not play)."""
        caller = await self.gateway().caller(request)
        name = _bounded(request.path_params["name"], "account")
        found = await self.gateway().lookup(caller, pb.LookupAccountRequest(name=name))
        kind = pb.AccountKind.Name(found.kind).removeprefix("ACCOUNT_KIND_").lower()
        shown = {"player": found.account_id, "name": found.name, "display_name": found.display_name}
        return JSONResponse({**shown, "kind": kind})

    async def accept(self, request: Request) -> Response:
        """The challenged account takes the table's second seat: the game starts (`game_id`)."""
        caller, challenge = await self._decider(request, "challenged")
        await self._decide(challenge, Decision("accepted"))
        try:
            message = mm.JoinPrivateTableRequest(table_id=challenge.table_id)
            reply = await self._stub().JoinPrivateTable(message, metadata=_auth(caller))
        except BaseException:
            await self.book.amend(challenge, None)  # not accepted after all: still open
            raise
        decision = Decision("accepted", game_id=reply.table.game_id)
        await self.book.amend(challenge, decision)
        return JSONResponse(challenge.decided(decision).public())

    async def decline(self, request: Request) -> Response:
        """`{"reason"?}` (one of `REASONS`, default generic): the challenger's stream says so."""
        _, challenge = await self._decider(request, "challenged")
        reason = _bounded(_typed(await small_json(request), "reason", str, "generic"), "reason")
        if reason not in REASONS:
            raise InvalidArgument("bad_reason", f"a reason is one of {', '.join(sorted(REASONS))}")
        decision = Decision("declined", reason=reason)
        await self._decide(challenge, decision)
        return JSONResponse(challenge.decided(decision).public())

    async def cancel(self, request: Request) -> Response:
        _, challenge = await self._decider(request, "challenger")
        decision = Decision("canceled")
        await self._decide(challenge, decision)
        return JSONResponse(challenge.decided(decision).public())

    async def _decider(self, request: Request, role: str) -> tuple[Caller, Challenge]:
        """The caller and the challenge in the path, when the caller is its `role` account."""
        caller = await self.gateway().caller(request)
        challenge = await self.book.get(_bounded(request.path_params["challenge"], "challenge"))
        if challenge is None:
            raise NotFound("no_such_challenge", "no challenge has this id (or it expired)")
        if getattr(challenge, role) != caller.principal.subject:
            if role == "challenger":
                raise PermissionDenied("not_challenger", "only the challenger may cancel a challenge")
            raise PermissionDenied("not_challenged", "only the challenged account may answer a challenge")
        return caller, challenge

    async def _decide(self, challenge: Challenge, decision: Decision) -> None:
        if not await self.book.decide(challenge, decision):
            decided = await self.book.get(challenge.id)
            status = decided.status if decided is not None else "expired"
            raise FailedPrecondition("challenge_decided", f"this challenge is {status} already")


def _auth(caller: Caller) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {caller.token}"),)


def _bounded(value: str, name: str) -> str:
    limit = LIMITS[name]
    if len(value) > limit:
        raise BadRequest(f"{name} has {len(value)} characters; at most {limit}", code="too_long")
    return value


def _typed(body: Mapping[str, Any], name: str, kind: type[T], default: T) -> T:
    """`body[name]` of JSON type `kind` (a whole number: 0 to 2^31-1), or `default` when missing."""
    value = body.get(name, default)
    if type(value) is not kind or (isinstance(value, int) and not 0 <= value < 2**31):
        raise BadRequest(f"{name} is {'text' if kind is str else 'a whole number from 0 to 2^31-1'}")
    found: T = value
    return found


def _options(given: object) -> dict[str, int | bool | str]:
    """House-rule options from outside: an object of at most 16 names to numbers, true/false or text,
    names and text bounded; matchmaking checks them against the variant's rules."""
    if given is None:
        return {}
    if not isinstance(given, dict) or len(given) > MAX_OPTIONS:
        raise BadRequest(f"options is an object of at most {MAX_OPTIONS} option names to values")
    options: dict[str, int | bool | str] = {}
    for name, value in given.items():
        _bounded(name, "option")
        if isinstance(value, str):
            _bounded(value, "option")
        elif not isinstance(value, int) or (type(value) is int and not -(2**31) <= value < 2**31):
            raise BadRequest(f"option {name[:40]!r} is a whole number, true/false or text")
        options[name] = value
    return options
