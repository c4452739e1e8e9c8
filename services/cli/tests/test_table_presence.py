"""The terminal's table shows each seat's time bank and a disconnected player's grace counting down, as
the web table does (meldstream M3)."""

from __future__ import annotations

import time

from meldstream_cli.table_text import table
from rich.text import Text
from rummy.game.v1 import game_service_pb2 as gs


def test_a_seat_gone_is_counted_down_and_each_bank_is_shown() -> None:
    view = gs.PlayerView(variant="kalooki", phase=gs.PHASE_DRAW, hand_sizes=[13, 13, 13], totals=[0, 0, 5])
    view.seats.add(seat=0, player_id="p-ann", presence=gs.SEAT_PRESENCE_CONNECTED, bank_left_ms=30_000)
    gone = view.seats.add(seat=1, player_id="p-bo", presence=gs.SEAT_PRESENCE_DISCONNECTED)
    gone.grace_ends_at.FromMilliseconds(int((time.time() + 25.4) * 1000))
    view.seats.add(seat=2, player_id="p-cy", presence=gs.SEAT_PRESENCE_FORFEITED)
    seats = [Text.from_markup(line).plain for line in table(view)[1:4]]
    assert seats[0] == "  p-ann: 13 cards · score 0 · bank 0:30", seats
    assert seats[1] == "  p-bo: 13 cards · score 0 · p-bo disconnected, 25 s", seats
    assert seats[2] == "  p-cy: 13 cards · score 5 · forfeited", seats
    gone.grace_ends_at.FromMilliseconds(int((time.time() - 1) * 1000))
    assert Text.from_markup(table(view)[2]).plain.endswith("· p-bo disconnected: the engine plays for them")
