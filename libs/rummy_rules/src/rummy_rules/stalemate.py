"""meldstream M1, the stalemate rule: when a deal stalls, and whether a stalled deal is void.

A deal ends without a winner after `Rules.stalemate_reshuffles` consecutive stock cycles in which
nobody melded, laid off or swapped, or after STALEMATE_IDLE_ROUNDS rounds of the table in which no
turn drew from the stock or changed the table (README, meldstream M1).
"""

from __future__ import annotations

from typing import Final

from rummy_rules.state import GameState
from rummy_rules.variant import REGISTRY

# meldstream M1: stalled deals of a match that are void (and redealt) before later ones are scored.
STALEMATE_VOIDS: Final = 2


def stalemate_voids(state: GameState) -> bool:
    """Whether a deal stopped by meldstream M1 now is void rather than scored.

    Kalooki §3.11.3 and rummy40 §3.10 void a deal nobody can win (no penalties, the same dealer
    deals again); M1 does so for the first STALEMATE_VOIDS stalemates of a match and scores later
    ones like a deal nobody went out of, so a match always ends. Rummy500 (D10) and contract (D16)
    always score a deal without a winner.
    """
    return REGISTRY[state.rules.variant].voids_unwon_deals and state.stalemates < STALEMATE_VOIDS


# meldstream M1, second trigger: this many rounds of the table in which no turn drew from the stock
# or melded, laid off or swapped end the deal (players only trading discards, never the stock).
STALEMATE_IDLE_ROUNDS: Final = 10


def idle_stalemate(state: GameState) -> bool:
    """Whether the turn now ending is the last of STALEMATE_IDLE_ROUNDS idle rounds (M1 on)."""
    return (
        bool(state.rules.stalemate_reshuffles)
        and state.turn_idle
        and state.idle_turns + 1 >= STALEMATE_IDLE_ROUNDS * sum(state.active)
    )
