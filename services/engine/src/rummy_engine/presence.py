"""Disconnect protection and time banks: who is at the table, and how long a seat to move is given.

A seat is connected while at least one stream authenticated as that seat is open on this engine (the
web gateway opens one per browser connection). A seat that never opened a stream (a program acting by
calls only) is never marked disconnected. When a seated player's last stream closes while the game is
played, the engine logs `SeatDisconnected` with the grace's end (its clock, in the event, so a restart,
a replay and a dispute read the same deadline). A stream of the seat opened again, or an action of
it, logs `SeatReconnected`. While the grace runs, the seat's turn waits for it (the grace stands
for the turn's limit); then its time bank
runs, then the engine plays its turns (the default action, `timers.py`) for `forfeit_after_turns`
turns, and at the next one the seat forfeits (the rules' `forfeit`, meldstream M3).

The time bank: when a turn's limit runs out and the seat has bank left, the turn goes on on the bank
(`Banking`). What it spent is logged as `TimeBankUsed`, first in the command of the seat's next action
or of its timeout, so the bank left is folded from the log (`EngineState.bank_left`). The clock of the
seat to move starts at the game's latest event (every append restarts it, until the seat is on its
bank), so where the clock stands is in the log too: that event's time (`occurred_at`) plus the limit
is when the bank started. A game loaded after a restart or a move of its partition resumes its clock
from there (`resumed`), not afresh: time the game spent between engines counts, as it does for a
grace. One case resumes later than the clock stood: an event of another seat appended while the seat
to move was on its bank (an out-of-turn call, a presence change) is the latest, and the clock resumes
from it with the limit again; never earlier.

Connections are counted per engine, in memory. After a restart or a move of the game's partition the
log says who is disconnected, and a grace counts down to its logged end; a seat the log says is
connected stays so until a stream of it opens and closes here (meanwhile its turns are timed, and it
is marked away, as any seat's).

Pure decisions here; `app.py` holds the locks, appends and timers.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Final

from rummy.game.v1 import game_service_pb2 as gs
from rummy_contracts.event_format import Logged
from rummy_contracts.facts import SeatDisconnected, SeatReconnected, TimeBankUsed
from rummy_contracts.projection import EngineState
from rummy_rules.state import DRAW, GAME_OVER, PLAY

TIMER_SLACK_MS: Final = 50
"""How early a timer may wake against the wall clock the grace's end was written in (the loop's clock
is another) and still count as at it."""


@dataclass(frozen=True, slots=True)
class Banking:
    """The seat to move whose limit ran out is on its bank since `started` (the engine's clock, s: the
    wall clock events are stamped with)."""

    seat: int
    started: float


class SeatStreams:
    """The open streams of a game's seats on this engine (what "connected" means here)."""

    def __init__(self) -> None:
        self._open: Counter[int] = Counter()

    def opened(self, seat: int) -> None:
        self._open[seat] += 1

    def closed(self, seat: int) -> bool:
        """Count one stream of `seat` closed; True when it was the seat's last."""
        self._open[seat] -= 1
        if self._open[seat] > 0:
            return False
        del self._open[seat]
        return True

    def connected(self, seat: int) -> bool:
        return self._open[seat] > 0


def disconnect(state: EngineState, seat: int, now: float, grace_ms: int, forfeit_after: int) -> list[Logged]:
    """SeatDisconnected for a seat still playing a running game and marked connected; else nothing."""
    if not grace_ms or state.game.phase is GAME_OVER or not state.game.active[seat] or state.grace_ends[seat]:
        return []
    ends = int(now * 1000) + grace_ms
    return [SeatDisconnected(seat, grace_ms, ends, forfeit_after)]


def reconnect(state: EngineState, seat: int) -> list[Logged]:
    """SeatReconnected for a disconnected seat that still plays; else nothing."""
    return [SeatReconnected(seat)] if state.gone(seat) and state.game.phase is not GAME_OVER else []


def deadline(
    state: EngineState,
    seat: int,
    now: float,
    *,
    limit_ms: int | None,
    away_grace_ms: int,
    banking: Banking | None,
    since: float | None = None,
) -> float | None:
    """When the turn of `seat` (to move) runs out, its clock started at `since` (None: `now`), or None
    for never; `limit_ms` None: the turn has no limit. On its bank: when the bank is spent. A
    disconnected seat: when its grace ends (it stands for the turn's limit: nobody is there to use
    it), after that at once (the away grace)."""
    if banking is not None:
        return banking.started + state.bank_left(seat) / 1000
    if state.gone(seat):
        ends = state.grace_ends[seat] / 1000
        return ends if now < ends else now + away_grace_ms / 1000
    return None if limit_ms is None else (now if since is None else since) + limit_ms / 1000


def resumed(state: EngineState, seat: int, now: float, since: float, limit_ms: int | None) -> Banking | None:
    """The bank run of `seat` (to move) in a game just loaded, whose latest event was logged at `since`:
    its clock started then, so once its limit is past it has been on its bank since `since` plus the
    limit. None: not on it (untimed, the limit still running, no bank left, or disconnected: the
    grace stands for the limit)."""
    if limit_ms is None or state.gone(seat) or not state.bank_left(seat):
        return None
    started = since + limit_ms / 1000
    return Banking(seat, started) if started <= now else None


def starts_bank(state: EngineState, seat: int, banking: Banking | None) -> bool:
    """Whether a turn whose limit just ran out goes on on the seat's bank."""
    return banking is None and state.bank_left(seat) > 0


def spent(state: EngineState, seat: int, banking: Banking | None, now: float) -> list[Logged]:
    """TimeBankUsed for what `seat` spent of its bank on the turn now ending (nothing off its bank)."""
    if banking is None or banking.seat != seat:
        return []
    used = min(state.bank_left(seat), max(0, round((now - banking.started) * 1000)))
    return [TimeBankUsed(seat, used)] if used else []


def forfeits(state: EngineState, seat: int, now: float) -> bool:
    """Whether the timeout of `seat` now is its forfeit: disconnected past the grace, with every
    automatic turn it was given played."""
    return (
        state.gone(seat)
        and now * 1000 + TIMER_SLACK_MS >= state.grace_ends[seat]
        and state.auto_turns[seat] >= state.forfeit_after[seat]
    )


def in_play(state: EngineState) -> bool:
    return state.game.phase is DRAW or state.game.phase is PLAY


def seat_presence(state: EngineState, seat: int) -> tuple[gs.SeatPresence.ValueType, int, int, int]:
    """(presence, grace end in epoch ms or 0, bank left in ms, automatic turns left before a forfeit)."""
    if seat in state.game.forfeited:
        return gs.SEAT_PRESENCE_FORFEITED, 0, state.bank_left(seat), 0
    if state.gone(seat):
        turns = max(0, state.forfeit_after[seat] - state.auto_turns[seat])
        return gs.SEAT_PRESENCE_DISCONNECTED, state.grace_ends[seat], state.bank_left(seat), turns
    return gs.SEAT_PRESENCE_CONNECTED, 0, state.bank_left(seat), 0
