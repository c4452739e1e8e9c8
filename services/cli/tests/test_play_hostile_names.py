"""`meldstream play` with hostile names seated: every screen it prints (the table, the buy window, the
melds, the menu, a deal's end, the game's end) shows each name as typed, made printable, and prints no
raw control character (ESC, C0 and C1 controls, bidi overrides, zero-width characters) but the
colours rich writes itself; rich markup and emoji codes in a name are text, and raise nothing.

Identity now refuses a display name with a control character, but a table may still seat one (an
operator seats any id, a store written before names had rules), and the terminal must not obey it.
The player's session is a fake client (the stream and the moves), so this runs without a platform;
test_hostile_names (tests/browser) plays a whole game with a hostile display name on a real one."""

from __future__ import annotations

import asyncio
import io
import os
import re
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from meldstream_cli import play
from meldstream_web.bots import BuyWindows
from rummy.game.v1 import events_pb2 as ev
from rummy.game.v1 import game_service_pb2 as gs
from rummy_service.text import printable

NAMES = (
    "\x1b]0;pwned\x07\x1b[2J[bold]x[/x]",  # a terminal's title, bell, clear screen; rich markup
    "\x9b31m\x85c1\u202eevil",  # C1: a CSI and a next line; a right-to-left override
    "z\u200bw\u200c\u200d\ufeffj",  # zero-width space, non-joiner, joiner, no-break space
    "[/x] [/] [link=https://evil.example]here[/link]",  # closing tags that open nothing would raise
    ":pile_of_poo: :smile:",  # emoji codes: rich would draw them
    "back\\",  # a trailing backslash: doubled by rich's escape before text
)
YOU = "[red]me[/red] \\"  # the display name the player signed in with (`shown` for seat 0)
SGR = re.compile(r"\x1b\[[0-9;]*m")  # the colours rich writes: its own, no name's
CARD = ev.Card(rank=7, suit=ev.SUIT_HEARTS)


def _view(phase: int, **fields: Any) -> gs.PlayerView:
    seats = [gs.SeatInfo(seat=i, player_id=f"id-{i}" if i == 0 else n) for i, n in enumerate(("", *NAMES))]
    players = len(seats)
    return gs.PlayerView(
        game_id="g-hostile",
        variant="contract",
        seat=0,
        seats=seats,
        hand=[CARD],
        hand_sizes=[11] * players,
        opened=[False] * players,
        totals=list(range(players)),
        buys=[0] * players,
        last_penalties=[5] * players,
        melds=[gs.TableMeld(index=i, owner=i + 1) for i in range(len(NAMES))],
        phase=phase,  # type: ignore[arg-type]
        deal=1,
        **fields,
    )


class FakeClient:
    """Seat 0's session: a turn with a card on offer, the deal's end, the game's end."""

    def __init__(self) -> None:
        self.sent: list[gs.Action] = []

    async def updates(self, game_id: str, seat: int) -> AsyncIterator[gs.GameUpdate]:
        turn = _view(
            gs.PHASE_DRAW, turn=2, offer=CARD, offer_from=1, buy_request=3, discard_top=CARD, discard_size=1
        )
        moves = [gs.Action(buy_discard=gs.BuyDiscard()), gs.Action(draw_from_stock=gs.DrawFromStock())]
        yield gs.GameUpdate(view=turn, legal_actions=moves)
        yield gs.GameUpdate(view=_view(gs.PHASE_DEAL_OVER, turn=4))
        yield gs.GameUpdate(view=_view(gs.PHASE_GAME_OVER, winners=[1, 2, 3, 4, 5, 6]))

    async def submit(self, game_id: str, seat: int, action: gs.Action, command_id: str) -> None:
        self.sent.append(action)

    async def offer_seed(self, game_id: str, seat: int, view: gs.PlayerView) -> bool:
        return False  # this game was dealt at creation: no seed is asked for


def test_hostile_names_print_as_text_and_no_control_character(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    console = play.terminal(file=out, force_terminal=True, color_system="truecolor", width=400)
    typed, typing = os.pipe()  # the person types 2: draw (play reads stdin's file descriptor)
    os.write(typing, b"2\n")
    os.close(typing)
    client = FakeClient()
    with os.fdopen(typed) as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        code = asyncio.run(
            play._seat(console, client, "g-hostile", BuyWindows(), {"id-0": YOU})  # type: ignore[arg-type]
        )
    assert code == 0 and [a.WhichOneof("kind") for a in client.sent] == ["draw_from_stock"]
    text = SGR.sub("", out.getvalue())
    assert "\x1b" not in text, [line for line in text.split("\n") if "\x1b" in line][:3]
    assert [line for line in text.split("\n") if not line.isprintable()] == []
    for name in (*NAMES, YOU):
        assert f"  {printable(name)}: 11 cards" in text, (printable(name), text)  # the seat, as typed
    assert "[bold]x[/x]" in text and ":pile_of_poo:" in text and "back\\: " in text and "back\\\\" not in text
    offer = f"(discarded by {printable(NAMES[0])}) is on offer until {printable(NAMES[1])} draws; "
    assert offer + f"{printable(NAMES[2])} asked to buy it" in text, text
    assert f"meld 4 ({printable(NAMES[3])})" in text
    assert "Game over — winner: " + ", ".join(printable(n) for n in NAMES) in text, text
    assert f"totals: {printable(YOU)} 0, {printable(NAMES[0])} 1" in text
