"""Refused commands on record: who, when, what and the code, in an audit stream beside the game's.

"The server refused my legal move" can only be settled if the refusal left a trace. A refusal changes
no game state, so it is never an event of the game's stream (folds, seqs and snapshots stay as they
are); it is a record of its own stream: the embedded store's `refusals.sqlite` beside `events.sqlite`,
or the topic `<game topic>.refusals` on Kafka, keyed by game id, one JSON record each (fields in
docs/replay-export.md, `refused`). `meldstream replay` shows them in time order with the game's events.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Final

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message
from rummy_service.auth import Principal
from rummy_service.errors import ServiceError
from rummy_store import ConcurrencyError, EventLog, NewEvent, StoreError

from rummy_engine.config import EngineConfig

log = logging.getLogger(__name__)

RECORD_TYPE: Final = "command_refused"
RECORD_FORMAT: Final = 1
EMBEDDED_FILE: Final = "refusals.sqlite"


def topic_of(game_topic: str) -> str:
    return f"{game_topic}.refusals"


def open_refusals(config: EngineConfig) -> EventLog:
    """The refusal stream of the engine's store (created if missing). On Kafka each refusal claims its
    partition's writer on demand: an engine writes only its own games'."""
    return config.store.open().log(topic_of(config.topic), EMBEDDED_FILE, config.partitions, writer=True)


class RefusalStream:
    """The engine's refusal stream, opened at the first refusal: most engines never refuse a move, and
    on Kafka opening it means a topic and a writer."""

    def __init__(self, config: EngineConfig) -> None:
        self._config = config
        self._log: EventLog | None = None
        self._lock = threading.Lock()

    def record(self, entry: dict[str, Any]) -> None:
        """`record` on the stream (blocking: call it off the event loop)."""
        with self._lock:
            stream = self._log
            if stream is None:
                try:
                    stream = self._log = open_refusals(self._config)
                except StoreError as exc:
                    log.warning("game %s: a refusal could not be recorded: %s", entry["game_id"], exc)
                    return
            record(stream, entry)

    def close(self) -> None:
        with self._lock:
            if self._log is not None:
                self._log.close()


TRANSIENT: Final = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})


def on_record(refused: ServiceError, players: Sequence[str], principal: Principal) -> bool:
    """Whether a refused SubmitAction goes on record: every refusal of a move by one of the game's
    players (the rules', and the others: another seat's move, a malformed action, a reused command
    id), since any of them can be the move a player says was legal. Not a transient answer (the store
    or the game's owner is away: the client retries, nothing was decided), and not a caller who holds
    no seat: anyone could otherwise write to any game's record."""
    return refused.status not in TRANSIENT and principal.is_player_named(players)


def refusal(
    *,
    game_id: str,
    seat: int,
    player: str,
    at: float,
    after_seq: int,
    command_id: str,
    action: Message,
    code: str,
    message: str,
) -> dict[str, Any]:
    """One refusal as recorded: the action in protobuf's JSON mapping, the time in RFC 3339 (UTC)."""
    return {
        "game_id": game_id,
        "seat": seat,
        "player": player,
        "time": datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "after_seq": after_seq,
        "command_id": command_id,
        "action": json_format.MessageToDict(action, preserving_proto_field_name=True),
        "code": code,
        "message": message,
    }


def record(stream: EventLog, entry: dict[str, Any]) -> None:
    """Append one refusal to its game's refusal stream (blocking: call it off the event loop). A store
    that fails is logged, not raised: the player's answer must not wait on the audit trail."""
    payload = json.dumps(entry, sort_keys=True).encode()
    game_id = entry["game_id"]
    # The id is the refusal's own digest: a retried append is recognised, a new refusal never is.
    command_id = "refused/" + hashlib.sha256(payload).hexdigest()[:32]
    failure: Exception | None = None
    for _ in range(3):
        try:
            last = stream.last_seq(game_id)
            stream.append(game_id, command_id, last, [NewEvent(RECORD_TYPE, payload, RECORD_FORMAT)])
            return
        except ConcurrencyError as exc:  # two refusals of one game at once: append after the other
            failure = exc
        except StoreError as exc:  # on Kafka, fenced by another engine: the next append claims again
            failure = exc
    log.warning("game %s: a refusal could not be recorded: %s", game_id, failure)


def read(stream: EventLog, game_id: str) -> list[dict[str, Any]]:
    """A game's refusals in the order they were recorded."""
    return [
        json.loads(r.payload)
        for r in stream.read_stream(game_id)
        if r.event_type == RECORD_TYPE and r.schema_version == RECORD_FORMAT
    ]
