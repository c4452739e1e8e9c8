"""Who may do what: a player acts and sees only for their own seat; nobody is seated without asking.

Scopes (`rummy_service.auth`): `play` and `bot:play` act for the seat whose player id is the token's
subject; `watch` (or any of those) spectates and reads a history with the cards it may see; `operate` reads
finished histories whole. Seats are consented:
a player's own CreateGame seats only them and the house bots (`rummy_contracts.house`), and is casual;
tables of other people come from matchmaking, where each of them queued, registered or joined a
private table (its `TableFormed`, created here with a `service:engine` or `service:matchmaking`
token), and only those may be rated. A house bot's seat is played by the table's creator or by a
service with `service:bots`.

Every check raises a `ServiceError` mapped to its gRPC status (PERMISSION_DENIED, INVALID_ARGUMENT,
FAILED_PRECONDITION) before the engine touches the game.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, TypeVar

from rummy.game.v1 import game_service_pb2 as gs
from rummy_contracts import sight
from rummy_contracts.house import is_house_bot
from rummy_contracts.projection import EngineState
from rummy_contracts.sight import Sight
from rummy_rules.state import Phase
from rummy_service import auth
from rummy_service.auth import Principal, require, service_scope
from rummy_service.errors import InvalidArgument, PermissionDenied

FROM_MATCHMAKING: Final = "matchmaking"  # TableSeated.requested_by of the tables matchmaking formed
TABLE_SERVICES: Final = (service_scope("engine"), service_scope("matchmaking"))
BOTS_SERVICE: Final = service_scope("bots")
SPECTATE: Final = (auth.WATCH, auth.PLAY, auth.BOT_PLAY, auth.OPERATE)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Seating:
    """A CreateGame as the engine records it: who asked, the names shown, which seats are programs,
    and whether it is rated."""

    requested_by: str
    names: tuple[str, ...]
    bots: tuple[bool, ...]
    rated: bool


def check_seat(state: EngineState, principal: Principal, seat: int) -> None:
    """The caller must play `seat`: its own (by subject), or a house bot's at a table it created, or
    any house bot's with `service:bots`. Operators may not act or look for a seat."""
    players = state.table.players
    if not 0 <= seat < len(players):
        raise InvalidArgument("bad_seat", f"no seat {seat} at this table (seats 0..{len(players) - 1})")
    if principal.is_player_named((players[seat],)):
        return
    if is_house_bot(players[seat]) and (
        principal.has(BOTS_SERVICE) or (principal.plays and principal.subject == state.table.requested_by)
    ):
        return
    raise PermissionDenied("not_your_seat", f"seat {seat} is not yours")


def seating(principal: Principal, request: gs.CreateGameRequest) -> Seating:
    """Who may create this table, and how it is recorded.

    Matchmaking's tables (a `service:` token) seat anyone who asked matchmaking, with the names and
    rating it says; an operator's seat anyone, casual; a player's only themselves and house bots,
    casual (PERMISSION_DENIED `not_consented` for anyone else: they never asked to play).
    """
    players: Sequence[str] = request.player_ids
    if not principal.scopes.isdisjoint(TABLE_SERVICES):
        return Seating(
            FROM_MATCHMAKING,
            _padded(request.player_names, players, ""),
            _padded(request.bots, players, False),
            request.rated,
        )
    bots = tuple(is_house_bot(player) for player in players)
    if principal.is_operator:
        return Seating(principal.subject, tuple(players), bots, False)
    require(principal, auth.PLAY, auth.BOT_PLAY)
    if principal.subject not in players:
        raise PermissionDenied("not_at_table", "a player may only create a table they sit at")
    strangers = [p for p in players if p != principal.subject and not is_house_bot(p)]
    if strangers:
        raise PermissionDenied(
            "not_consented",
            "a table you create seats you and the house bots only: invite people to a private table "
            "(matchmaking), where each of them joins",
        )
    names = tuple((principal.name or p) if p == principal.subject else p for p in players)
    mine = principal.kind == auth.BOT
    seated_bots = tuple(b or (mine and p == principal.subject) for p, b in zip(players, bots, strict=True))
    return Seating(principal.subject, names, seated_bots, False)


def _padded(values: Sequence[T], players: Sequence[str], blank: T) -> tuple[T, ...]:
    if values and len(values) != len(players):
        raise InvalidArgument("bad_players", "player_names and bots have one entry per seat, or none")
    return tuple(values) or (blank,) * len(players)


def check_spectator(principal: Principal) -> None:
    require(principal, *SPECTATE)


def is_over(state: EngineState) -> bool:
    return state.game.phase is Phase.GAME_OVER


def history_sight(state: EngineState, principal: Principal, seat: int | None) -> Sight:
    """What a history shows its caller (already checked as for StreamGame with `seat`, as for
    WatchGame without): every card once the game has ended, to its players and operators, as
    `may_see_all_hands`; otherwise, as its streams show them, the seat's own cards or a spectator's
    none (`rummy_contracts.sight`, the rule the export and the log in words use)."""
    if may_see_all_hands(state, principal):
        return sight.EVERYTHING
    return sight.of_seat(seat)


def may_see_all_hands(state: EngineState, principal: Principal) -> bool:
    return is_over(state) and (principal.is_operator or principal.is_player_named(state.table.players))
