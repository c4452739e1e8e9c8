"""Chat at the table and in the lobby: the gateway's routes over `ChatLog` (chat_log.py).

A line's text is bounded before anything else is done with it (the body's bytes, then its characters),
counted against the account's chat limit (429 with Retry-After), masked for the operators' blocked
words, then put on record; the page shows it as text only. At a table, spectators' lines are kept
apart for good: players never see them (a game's talk is its players'; spectators read both). A muted
account's lines are not sent to the account that muted it, at any replica. A report puts the line and
the lines around it before the operators (`/operate/chat`, accounts with the `operate` scope).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
import unicodedata
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Final

from rummy_service.rate_limits import Limiter
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from meldstream_web import sse
from meldstream_web.api import BadRequest, Gateway
from meldstream_web.chat_config import ChatSettings, masked
from meldstream_web.chat_log import PLAYERS, SPECTATORS, ChatLine, ChatLog
from meldstream_web.chat_mutes import Mutes
from meldstream_web.sessions import Caller
from meldstream_web.tokens import small_json

log = logging.getLogger("meldstream_web")
BODY: Final = 8 * 1024  # bytes of a posted line, its JSON around it included
GAME_ID: Final = 64
ACCOUNT_ID: Final = 64
REASON: Final = 200
RETRY_S: Final = 5.0  # between attempts to open chat's store
SEATED_KEPT: Final = 10_000  # (game, account) -> seated, remembered
QUEUED: Final = 100  # lines waiting for one slow stream; more are dropped for it
MUTES_FILE: Final = "chat-mutes.sqlite"
PAGE: Final = Path(__file__).parent / "static" / "chat-reports.html"


class Chat:
    """The chat routes' handlers; `gateway` answers the gateway (made when the app starts)."""

    def __init__(
        self, settings: ChatSettings, gateway: Callable[[], Gateway], limiter: Limiter, prefix: str = ""
    ) -> None:
        self.settings = settings
        self._gateway = gateway
        self._limiter = limiter
        self._prefix = prefix
        self._opened: tuple[ChatLog, Mutes] | None = None
        self._listeners: defaultdict[str, set[asyncio.Queue[ChatLine]]] = defaultdict(set)
        self._seated: dict[tuple[str, str], bool] = {}
        self._retrying: asyncio.Future[None] | None = None

    async def start(self, *, shared: bool = False) -> None:
        """Open the store (its topics created if missing) and follow it; if it cannot be opened now,
        keep trying in the background (chat answers 503 meanwhile): the games never wait for chat.
        `shared`: replicas count together (a Redis), so a chat only this replica reads is worth a
        warning."""
        location = self.settings.store
        if location.embedded and shared:
            log.warning(
                "chat: on the embedded store in %s, which other replicas do not read: set "
                "MELDSTREAM_STORE=kafka://...?redis=... for chat across replicas",
                location.directory,
            )
        if not await self._open():
            self._retrying = asyncio.ensure_future(self._open_later())

    async def _open(self) -> bool:
        try:
            store = await asyncio.to_thread(self.settings.store.open, redis_timeout_s=2.0)
            lines = await asyncio.to_thread(ChatLog, store)
        except Exception as exc:
            log.error("chat: its store did not open (%s); retrying in %.0f s", str(exc)[:200], RETRY_S)
            return False
        self._opened = (lines, Mutes(store.key_value(MUTES_FILE), self._prefix))
        lines.start(self._deliver)
        return True

    async def _open_later(self) -> None:
        while True:
            await asyncio.sleep(RETRY_S)
            if await self._open():
                return

    async def stop(self) -> None:
        if self._retrying is not None:
            self._retrying.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._retrying
        if self._opened is not None:
            await asyncio.to_thread(self._opened[0].stop)

    @property
    def log(self) -> ChatLog:
        if self._opened is None:
            raise BadRequest("chat is not available yet: its store is not open", 503, "chat_unavailable")
        return self._opened[0]

    @property
    def mutes(self) -> Mutes:
        if self._opened is None:
            raise BadRequest("chat is not available yet: its store is not open", 503, "chat_unavailable")
        return self._opened[1]

    def _deliver(self, line: ChatLine) -> None:
        for queue in list(self._listeners.get(line.room, ())):
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(line)

    # --- who reads what ---------------------------------------------------------------------------

    async def _channel(self, caller: Caller, room: str) -> str:
        """The caller's channel in `room`: players' when it has a seat at the game, else spectators'."""
        if room == "lobby":
            return PLAYERS
        key = (room, caller.principal.subject)
        if key not in self._seated:
            async with self._gateway().client(caller.token) as client:
                view = await client.view(room.removeprefix("game:"))
            if len(self._seated) >= SEATED_KEPT:  # a seat never changes hands: forgetting costs a call
                self._seated.clear()
            self._seated[key] = any(s.player_id == caller.principal.subject for s in view.seats)
        return PLAYERS if self._seated[key] else SPECTATORS

    async def visible(self, caller: Caller, room: str) -> Callable[[ChatLine], bool]:
        """Which lines of `room` the caller is sent (its channel's, and no muted account's)."""
        channel = await self._channel(caller, room)
        me = caller.principal.subject
        muted = await self.mutes.of(me)

        def shown(line: ChatLine) -> bool:
            return (channel == SPECTATORS or line.channel == PLAYERS) and line.author not in muted

        return shown

    async def lines(self, caller: Caller, room: str, after: int = -1) -> AsyncIterator[ChatLine]:
        """The room's kept lines after offset `after` the caller may see, then each new one, for ever."""
        queue: asyncio.Queue[ChatLine] = asyncio.Queue(QUEUED)
        self._listeners[room].add(queue)
        try:
            last = after
            for line in self.log.recent(room):
                if line.offset > last and (await self.visible(caller, room))(line):
                    last = line.offset
                    yield line
            while True:
                line = await queue.get()
                if line.offset > last and (await self.visible(caller, room))(line):
                    last = line.offset
                    yield line
        finally:
            self._listeners[room].discard(queue)
            if not self._listeners[room]:
                del self._listeners[room]

    # --- posting ----------------------------------------------------------------------------------

    async def say(self, caller: Caller, room: str, text: object) -> ChatLine:
        """Put the caller's line in `room` on record: checked, limited, masked."""
        text = self.checked_text(text)
        await self._rate(caller.principal.subject)
        channel = await self._channel(caller, room)
        principal = caller.principal
        line = ChatLine(
            id=uuid.uuid4().hex,
            room=room,
            channel=channel,
            author=principal.subject,
            name=(principal.name or principal.subject)[:64],
            text=masked(text, self.settings.blocked),
            at=time.time(),
        )
        await asyncio.to_thread(self.log.write, line)
        return line

    def checked_text(self, text: object) -> str:
        """A line's text: a string of at most `max_chars` characters (checked first), no control
        characters, something left after trimming."""
        if not isinstance(text, str):
            raise BadRequest("text is a string")
        limit = self.settings.max_chars
        if len(text) > limit:
            raise BadRequest(f"the line has {len(text)} characters; at most {limit}", code="too_long")
        text = text.strip()
        if not text:
            raise BadRequest("the line is empty", code="empty_line")
        if any(unicodedata.category(c) == "Cc" for c in text):
            raise BadRequest("the line holds control characters (a line break among them)", code="bad_text")
        return text

    async def _rate(self, account: str) -> None:
        wait = await self._limiter.retry_after(self.settings.rate_items, "web-chat", account)
        if wait is not None:
            raise ChatLimited(max(1, math.ceil(wait)))

    # --- handlers ---------------------------------------------------------------------------------

    async def stream(self, request: Request) -> Response:
        """The room's lines as server-sent events `line` (id: the line's offset; a reconnect resumes
        after Last-Event-ID)."""
        room = _room(request)
        caller = await self._gateway().caller(request)
        await self._channel(caller, room)  # an unknown game: refused here, before the stream
        raw = request.headers.get("last-event-id") or request.query_params.get("after", "-1")
        after = int(raw) if raw.lstrip("-").isdigit() and len(raw) <= 19 else -1

        async def messages() -> AsyncIterator[str]:
            async for line in self.lines(caller, room, after):
                yield sse.message(line.to_json(), event="line", event_id=line.offset)

        return sse.stream(messages())

    async def post(self, request: Request) -> Response:
        """`{"text"}`: a line in the room; the line as written."""
        room = _room(request)
        body = await small_json(request, BODY)
        text = self.checked_text(body.get("text"))
        caller = await self._gateway().caller(request)
        return JSONResponse((await self.say(caller, room, text)).to_json())

    async def list_mutes(self, request: Request) -> Response:
        caller = await self._gateway().caller(request)
        return JSONResponse({"muted": sorted(await self.mutes.of(caller.principal.subject, fresh=True))})

    async def set_mute(self, request: Request) -> Response:
        """`{"account", "muted": true|false}`: hide (or show again) an account's lines, for good."""
        body = await small_json(request, 1024)
        account = body.get("account")
        if not isinstance(account, str) or not account or len(account) > ACCOUNT_ID:
            raise BadRequest(f"account is an account id of 1 to {ACCOUNT_ID} characters", code="too_long")
        caller = await self._gateway().caller(request)
        if account == caller.principal.subject:
            raise BadRequest("you cannot mute yourself", code="bad_mute")
        try:
            muted = await self.mutes.set(
                caller.principal.subject, account, body.get("muted", True) is not False
            )
        except ValueError as exc:
            raise BadRequest(str(exc), code="too_many") from None
        return JSONResponse({"muted": sorted(muted)})

    async def report(self, request: Request) -> Response:
        """`{"line", "reason"?}`: the line, with the lines around it, before the operators."""
        body = await small_json(request, 2048)
        line_id, reason = body.get("line"), body.get("reason", "")
        if not isinstance(line_id, str) or len(line_id) > 64:
            raise BadRequest("line is a line's id", code="too_long")
        if not isinstance(reason, str) or len(reason) > REASON:
            raise BadRequest(f"reason is a string of at most {REASON} characters", code="too_long")
        caller = await self._gateway().caller(request)
        await self._rate(caller.principal.subject)
        line = self.log.find(line_id)
        if line is None:
            raise BadRequest("no such line (or too old to report here)", 404, "no_such_line")
        report_id = uuid.uuid4().hex
        principal = caller.principal
        await asyncio.to_thread(
            self.log.report, report_id, principal.subject, principal.name[:64], line, reason.strip()
        )
        return JSONResponse({"report": report_id})

    async def reports(self, request: Request) -> Response:
        """Every report, newest first, with its lines: for operators only."""
        caller = await self._gateway().caller(request)
        if not caller.principal.is_operator:
            raise BadRequest("operators only (the operate scope)", 403, "not_operator")
        return JSONResponse({"reports": self.log.all_reports()})

    async def page(self, _request: Request) -> Response:
        return FileResponse(PAGE, headers={"Cache-Control": "no-cache"})


class ChatLimited(BadRequest):
    """Over the account's chat limit: 429 with Retry-After."""

    def __init__(self, seconds: int) -> None:
        super().__init__(f"too many lines: retry in {seconds} s", 429, "rate_limited")
        self.seconds = seconds


async def limited(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ChatLimited)
    body = {"status": "RESOURCE_EXHAUSTED", "code": exc.code, "message": str(exc)}
    return JSONResponse(body, 429, headers={"Retry-After": str(exc.seconds)})


def _room(request: Request) -> str:
    game = request.path_params.get("game")
    if game is None:
        return "lobby"
    if not isinstance(game, str) or not game or len(game) > GAME_ID:
        raise BadRequest(f"game has more than {GAME_ID} characters", code="too_long")
    return f"game:{game}"


def chat_routes(chat: Chat) -> list[Route]:
    """The chat routes, as app.py mounts them."""
    return [
        Route("/api/chat/lobby/stream", chat.stream, methods=["GET"]),
        Route("/api/chat/lobby", chat.post, methods=["POST"]),
        Route("/api/chat/games/{game}/stream", chat.stream, methods=["GET"]),
        Route("/api/chat/games/{game}", chat.post, methods=["POST"]),
        Route("/api/chat/mutes", chat.list_mutes, methods=["GET"]),
        Route("/api/chat/mutes", chat.set_mute, methods=["POST"]),
        Route("/api/chat/reports", chat.report, methods=["POST"]),
        Route("/api/chat/reports", chat.reports, methods=["GET"]),
        Route("/operate/chat", chat.page, methods=["GET"]),
    ]


def chat_json(line: ChatLine) -> dict[str, Any]:
    """A line as the bot API's game stream carries it."""
    return {"type": "chatLine", **line.to_json()}


async def beside(
    main: AsyncIterator[dict[str, Any]], side: AsyncIterator[dict[str, Any]]
) -> AsyncIterator[dict[str, Any]]:
    """`main`'s items with `side`'s mixed in as they come, until `main` ends (`side` is then closed).
    A failure of `main` ends the whole; one of `side` only ends `side`."""
    queue: asyncio.Queue[dict[str, Any] | BaseException | None] = asyncio.Queue(QUEUED)

    async def pump(source: AsyncIterator[dict[str, Any]], is_main: bool) -> None:
        try:
            async for item in source:
                await queue.put(item)
        except Exception as exc:
            if is_main:
                await queue.put(exc)
            else:  # chat away: the game goes on without it
                log.warning("chat: a game stream goes on without chat (%s)", str(exc)[:200])
        if is_main:
            await queue.put(None)

    tasks = [asyncio.ensure_future(pump(main, True)), asyncio.ensure_future(pump(side, False))]
    try:
        while (item := await queue.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
