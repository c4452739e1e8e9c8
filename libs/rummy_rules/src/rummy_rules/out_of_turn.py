"""Who may act now: the one home of the actions a seat may take when it is not the seat to move.

The rules (`decide`), the engine (its views' legal actions and who sent a command), the web gateway
and the terminal all ask here, so a new out-of-turn action is added once. Today only contract rummy's
buy window is open to other seats (§3.7.2): a buy request, or a pass on the card on offer.
"""

from __future__ import annotations

from typing import Final

from rummy_rules.commands import BuyDiscard, PassBuy
from rummy_rules.events import BuyRequested, BuyWaived
from rummy_rules.state import DRAW, PLAY, GameState, others_may_act

OUT_OF_TURN: Final = (BuyDiscard, PassBuy)
"""The commands a seat may send while another seat is to move (when the variant's window is open)."""

OUT_OF_TURN_OPENERS: Final = (BuyRequested, BuyWaived)
"""The first event of each `OUT_OF_TURN` command: it names the seat that sent the command."""


def may_act(state: GameState, seat: int) -> bool:
    """Whether `seat` may have a legal action now: the seat to move, or any seat while the game is
    open to others (`others_may_act`), and only while a deal is being played."""
    return (state.phase is DRAW or state.phase is PLAY) and (state.turn == seat or others_may_act(state))
