"""Chat lines and reports on the platform's store, read back by every gateway replica.

A line is written once to the topic `rummy.chat.lines.v1` (not game state: the engine never reads it)
and each replica follows the topic from a thread, keeping the newest lines of each room in memory and
handing every new one to the streams it serves: so a line posted at one replica reaches listeners at
all of them, and stays on record for a dispute. Reports go to `rummy.chat.reports.v1`, read from its
start, so the operators' view at any replica lists all of them with the lines around each.

One partition: chat is a few lines a second at most, and one partition gives every replica the same
order, and the offset doubles as the line's number a reconnecting stream resumes after.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Final

from rummy_store.event_log import EventLog
from rummy_store.locations import Store
from rummy_store.publisher import Publisher
from rummy_store.records import EventRecord, NewEvent

log = logging.getLogger("meldstream_web")
LINES_TOPIC: Final = "rummy.chat.lines.v1"
REPORTS_TOPIC: Final = "rummy.chat.reports.v1"
LINES_FILE: Final = "chat-lines.sqlite"
REPORTS_FILE: Final = "chat-reports.sqlite"
ROOM_LINES: Final = 200  # kept per room in memory: a page's backlog, and a report's context
STARTUP_LINES: Final = 20_000  # read back at start from the topic's end
CONTEXT: Final = 10  # lines either side of a reported one
POLL_S: Final = 0.1
CATCH_UP_S: Final = 5.0
PLAYERS: Final = "players"
SPECTATORS: Final = "spectators"


@dataclass(frozen=True, slots=True)
class ChatLine:
    """One line as written: `room` is `lobby` or `game:<id>`, `channel` players' or spectators'."""

    id: str
    room: str
    channel: str
    author: str
    name: str
    text: str
    at: float
    offset: int = -1  # its place in the topic (set when read back)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _line(record: EventRecord) -> ChatLine:
    data = json.loads(record.payload)
    data["offset"] = record.position.offset
    return ChatLine(**data)


class ChatLog:
    """The topic's writer and this replica's reader. `deliver` is called, on the event loop, with each
    new line read back (whichever replica wrote it)."""

    def __init__(self, store: Store) -> None:
        self._lines_out: Publisher = store.publisher(LINES_TOPIC, LINES_FILE, 1)
        self._reports_out: Publisher = store.publisher(REPORTS_TOPIC, REPORTS_FILE, 1)
        self._lines_in: EventLog = store.log(LINES_TOPIC, LINES_FILE, 1)
        self._reports_in: EventLog = store.log(REPORTS_TOPIC, REPORTS_FILE, 1)
        self._rooms: defaultdict[str, deque[ChatLine]] = defaultdict(lambda: deque(maxlen=ROOM_LINES))
        self._by_id: dict[str, ChatLine] = {}
        self.reports: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._lines_read = 0  # the next offset of the lines topic this replica will read
        self._loop: asyncio.AbstractEventLoop | None = None
        self._deliver: Callable[[ChatLine], None] | None = None

    def start(self, deliver: Callable[[ChatLine], None]) -> None:
        """Read back what is on record (the newest lines, every report), then follow both topics."""
        self._loop = asyncio.get_running_loop()
        self._deliver = deliver
        lines_at = max(0, self._lines_in.end_offset(0) - STARTUP_LINES)
        for target, source, start in (
            (self._keep_line, self._lines_in, lines_at),
            (self._keep_report, self._reports_in, 0),
        ):
            thread = threading.Thread(target=self._follow, args=(source, start, target), daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=5)
        for closing in (self._lines_out, self._reports_out, self._lines_in, self._reports_in):
            closing.close()

    def _follow(self, source: EventLog, offset: int, keep: Callable[[EventRecord], None]) -> None:
        while not self._stop.is_set():
            try:
                for record in source.read_partition(0, offset):
                    offset = record.position.offset + 1
                    keep(record)
                if source is self._lines_in:
                    self._lines_read = offset
            except Exception as exc:  # the store away: try again, the offset is kept
                log.warning("chat: reading the topic failed (%s); retrying", str(exc)[:200])
                self._stop.wait(1.0)
            self._stop.wait(POLL_S)

    def _keep_line(self, record: EventRecord) -> None:
        line = _line(record)
        with self._lock:
            room = self._rooms[line.room]
            if len(room) == room.maxlen:
                self._by_id.pop(room[0].id, None)
            room.append(line)
            self._by_id[line.id] = line
        if self._loop is not None and self._deliver is not None:
            self._loop.call_soon_threadsafe(self._deliver, line)

    def _keep_report(self, record: EventRecord) -> None:
        report = json.loads(record.payload)
        with self._lock:
            self.reports.append(report)

    def write(self, line: ChatLine) -> None:
        """On record (blocking until the store has it): every replica's reader then delivers it."""
        payload = json.dumps({k: v for k, v in line.to_json().items() if k != "offset"}).encode()
        self._lines_out.publish(line.id, line.id, 1, [NewEvent("ChatLine", payload)])

    def recent(self, room: str) -> list[ChatLine]:
        with self._lock:
            return list(self._rooms.get(room, ()))

    def find(self, line_id: str) -> ChatLine | None:
        with self._lock:
            return self._by_id.get(line_id)

    def report(self, report_id: str, reporter: str, reporter_name: str, line: ChatLine, reason: str) -> None:
        """A report of `line`, with the lines around it in its room (every one on record before the
        report, once this replica has read them: at most `CATCH_UP_S` later), on the reports topic."""
        end, deadline = self._lines_in.end_offset(0), time.monotonic() + CATCH_UP_S
        while self._lines_read < end and time.monotonic() < deadline:
            time.sleep(POLL_S / 2)
        room = self.recent(line.room)
        at = next((i for i, other in enumerate(room) if other.id == line.id), 0)
        context = [other.to_json() for other in room[max(0, at - CONTEXT) : at + CONTEXT + 1]]
        report = {
            "id": report_id,
            "reporter": reporter,
            "reporter_name": reporter_name,
            "reason": reason,
            "line": line.to_json(),
            "context": context,
            "at": time.time(),
        }
        self._reports_out.publish(
            report_id, report_id, 1, [NewEvent("ChatReport", json.dumps(report).encode())]
        )

    def all_reports(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(reversed(self.reports))
