"""Who may do what: a player acts and sees only for their own seat; operators read finished histories.

Every check raises a `ServiceError` mapped to its gRPC status (PERMISSION_DENIED, INVALID_ARGUMENT,
FAILED_PRECONDITION) before the engine touches the game.
"""

from __future__ import annotations

from rummy_rules.state import Phase
from rummy_service.auth import Principal
from rummy_service.errors import FailedPrecondition, InvalidArgument, PermissionDenied

from rummy_engine.projection import EngineState


def check_seat(state: EngineState, principal: Principal, seat: int) -> None:
    """The caller must be the player sitting at `seat` (operators may not act or look for a seat)."""
    players = state.table.players
    if not 0 <= seat < len(players):
        raise InvalidArgument("bad_seat", f"no seat {seat} at this table (seats 0..{len(players) - 1})")
    if players[seat] != principal.subject or principal.is_operator:
        raise PermissionDenied("not_your_seat", f"seat {seat} is not yours")


def is_over(state: EngineState) -> bool:
    return state.game.phase is Phase.GAME_OVER


def check_history(state: EngineState, principal: Principal) -> None:
    """All hands are shown only after the end, and only to the game's players and to operators."""
    if not (principal.is_operator or principal.subject in state.table.players):
        raise PermissionDenied("not_at_table", "only the game's players and operators may see its history")
    if not is_over(state):
        raise FailedPrecondition(
            "game_not_over", "the history with every hand is shown once the game has ended"
        )


def may_see_all_hands(state: EngineState, principal: Principal) -> bool:
    return is_over(state) and (principal.is_operator or principal.subject in state.table.players)
