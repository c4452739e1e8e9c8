"""Who may do what: a player acts and sees only for their own seat; operators read finished histories.

Roles (`rummy_service.auth`): only a player token acts or looks for a seat; tables for others are
created by services (matchmaking) and operators; a player may create a private table they sit at
(inviting friends), never one for other people (it would commit them to a game they did not ask for).

Every check raises a `ServiceError` mapped to its gRPC status (PERMISSION_DENIED, INVALID_ARGUMENT,
FAILED_PRECONDITION) before the engine touches the game.
"""

from __future__ import annotations

from collections.abc import Sequence

from rummy_rules.state import Phase
from rummy_service.auth import Principal
from rummy_service.errors import FailedPrecondition, InvalidArgument, PermissionDenied

from rummy_engine.projection import EngineState


def check_seat(state: EngineState, principal: Principal, seat: int) -> None:
    """The caller must be the player sitting at `seat` (operators may not act or look for a seat)."""
    players = state.table.players
    if not 0 <= seat < len(players):
        raise InvalidArgument("bad_seat", f"no seat {seat} at this table (seats 0..{len(players) - 1})")
    if not principal.is_player_named((players[seat],)):
        raise PermissionDenied("not_your_seat", f"seat {seat} is not yours")


def check_create(principal: Principal, players: Sequence[str]) -> None:
    """Services and operators seat anyone; a player only creates a table they sit at."""
    if principal.is_player and principal.subject not in players:
        raise PermissionDenied(
            "not_at_table",
            "a player may only create a table they sit at; tables for others come from matchmaking",
        )


def is_over(state: EngineState) -> bool:
    return state.game.phase is Phase.GAME_OVER


def check_history(state: EngineState, principal: Principal) -> None:
    """All hands are shown only after the end, and only to the game's players and to operators."""
    if not (principal.is_operator or principal.is_player_named(state.table.players)):
        raise PermissionDenied("not_at_table", "only the game's players and operators may see its history")
    if not is_over(state):
        raise FailedPrecondition(
            "game_not_over", "the history with every hand is shown once the game has ended"
        )


def may_see_all_hands(state: EngineState, principal: Principal) -> bool:
    return is_over(state) and (principal.is_operator or principal.is_player_named(state.table.players))
