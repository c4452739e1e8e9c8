"""What the engine tells operators: its Prometheus metrics and its log facts, kept out of the app's logic.

Metrics cost one counter or histogram update per action, labelled only by refusal code or variant
(never by game). Facts are one line each (`rummy_service.logs`) with the game's id and the players'
ids: game created and ended, action refused, turn timed out, player away and back. None carries a
card, a seed or a token.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Final

from prometheus_client import Counter, Gauge, Histogram
from rummy.game.v1 import game_service_pb2 as gs
from rummy_contracts.facts import PlayerAway, PlayerReturned, TurnTimedOut
from rummy_contracts.projection import EngineState
from rummy_rules.events import GameEnded
from rummy_service import logs
from rummy_service.errors import PermissionDenied, ServiceError, Unauthenticated

log = logging.getLogger("rummy_engine")

# Seconds, from a local store's milliseconds to a loaded cluster's second.
LATENCY_BUCKETS: Final = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
ACCEPTED: Final = Counter(
    "rummy_engine_actions_accepted", "SubmitAction calls answered OK (a retry answered again included)"
)
REFUSED: Final = Counter(
    "rummy_engine_actions_refused",
    "SubmitAction calls refused, by refusal code (a rule's, or not_your_seat, not_owner, ...)",
    ["code"],
)
ACTION_SECONDS: Final = Histogram(
    "rummy_engine_action_seconds",
    "Accepted SubmitAction calls: time in the engine from request to answer (append acknowledged)",
    buckets=LATENCY_BUCKETS,
)
LIVE_GAMES: Final = Gauge(
    "rummy_engine_live_games", "Games loaded in memory (played, streamed or timed here)"
)
SUBSCRIBERS: Final = Gauge("rummy_engine_stream_subscribers", "Open StreamGame and WatchGame streams")
APPEND_SECONDS: Final = Histogram(
    "rummy_engine_append_seconds",
    "A command's events, from queued for the log to acknowledged (the group commit's wait included)",
    buckets=LATENCY_BUCKETS,
)
BATCH_SIZE: Final = Histogram(
    "rummy_engine_append_batch_size",
    "Appends per log write (one group commit batch: on Kafka one transaction)",
    buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500),
)
BATCH_SECONDS: Final = Histogram(
    "rummy_engine_append_batch_seconds",
    "One group commit batch's write to the log, to its acknowledgement",
    buckets=LATENCY_BUCKETS,
)
GAMES_CREATED: Final = Counter("rummy_engine_games_created", "Games created, by variant", ["variant"])
GAMES_ENDED: Final = Counter("rummy_engine_games_ended", "Games played to their end, by variant", ["variant"])
TURN_TIMEOUTS: Final = Counter("rummy_engine_turn_timeouts", "Turns the engine played for a seat out of time")
_AUTHORIZATION: Final = (Unauthenticated, PermissionDenied)  # logged once, by rummy_service's interceptor


def accepted(seconds: float) -> None:
    ACCEPTED.inc()
    ACTION_SECONDS.observe(seconds)


def batch_written(appends: int, seconds: float) -> None:
    """A group commit batch went to the log (`GroupCommitter.on_batch`)."""
    BATCH_SIZE.observe(appends)
    BATCH_SECONDS.observe(seconds)


def refused(request: gs.SubmitActionRequest, error: ServiceError) -> None:
    """Count a refused action by its code; log it, unless it is the interceptor's to log."""
    REFUSED.labels(error.code).inc()
    if isinstance(error, _AUTHORIZATION):
        return
    facts: dict[str, object] = {"game_id": request.game_id, "seat": request.seat}
    if logs.caller.get():
        facts["player"] = logs.caller.get()
    facts.update(code=error.code, status=error.status.name, command_id=request.command_id)
    log.info("action refused", extra=facts)


def game_created(game_id: str, variant: str, players: Sequence[str], requested_by: str) -> None:
    GAMES_CREATED.labels(variant).inc()
    log.info(
        "game created",
        extra={"game_id": game_id, "variant": variant, "players": players, "requested_by": requested_by},
    )


NOTED: Final = frozenset({TurnTimedOut, PlayerAway, PlayerReturned, GameEnded})
"""The event types `noted` reports (the app checks the type before calling, on its hot path)."""


def noted(game_id: str, seq: int, event: object, state: EngineState) -> None:
    """The fact an event of a type in NOTED states, with `state` the game's state after it."""
    players = state.table.players
    if isinstance(event, GameEnded):
        variant = state.game.rules.variant
        GAMES_ENDED.labels(variant).inc()
        winners = [players[seat] for seat in event.winners]
        facts = {"game_id": game_id, "variant": variant, "players": players, "winners": winners, "seq": seq}
        log.info("game ended", extra=facts)
    elif isinstance(event, TurnTimedOut):
        TURN_TIMEOUTS.inc()
        facts = {"game_id": game_id, "seat": event.seat, "player": players[event.seat]}
        facts.update(in_a_row=event.in_a_row, limit_ms=event.limit_ms, seq=seq)
        log.info("turn timed out", extra=facts)
    elif isinstance(event, PlayerAway | PlayerReturned):
        message = "player away" if isinstance(event, PlayerAway) else "player returned"
        log.info(message, extra={"game_id": game_id, "seat": event.seat, "player": players[event.seat]})
