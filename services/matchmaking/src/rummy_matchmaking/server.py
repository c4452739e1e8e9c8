"""The gRPC face of matchmaking: thin aio servicer that authenticates, translates and delegates."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

import grpc
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.matchmaking.v1 import matchmaking_pb2_grpc as mm_grpc
from rummy_service import limits, logs
from rummy_service.auth import Principal, TokenVerifier, authenticate
from rummy_service.errors import PermissionDenied, stream_errors, unary_errors
from rummy_service.forwarding import metadata
from rummy_service.limits import check_lengths

from rummy_matchmaking import private_tables as private
from rummy_matchmaking.app import MatchmakingApp, TicketStatus
from rummy_matchmaking.forwarding import TICKET_ID, Router
from rummy_matchmaking.private_tables import PrivateTable
from rummy_matchmaking.tournaments import Table, Tournament

Context = grpc.aio.ServicerContext[Any, Any]
Reply = TypeVar("Reply")
AtTable = (
    mm.GetPrivateTableRequest
    | mm.JoinPrivateTableRequest
    | mm.ApprovePrivateSeatRequest
    | mm.RemovePrivateSeatRequest
    | mm.AcceptRematchRequest
)
LIMITS: Final[Mapping[str, int]] = {
    "variant": limits.VARIANT,
    "party": limits.PLAYER_ID,
    "player_id": limits.PLAYER_ID,
    "private_code": limits.PRIVATE_CODE,
    "ticket_id": limits.TICKET_ID,
    "tournament_id": limits.TOURNAMENT_ID,
    "options": limits.OPTION_NAME,
    "string_value": limits.OPTION_VALUE,
    "seed": limits.SEED,  # bytes
    "table_id": private.TABLE_ID_CHARS,
    "short_code": private.CODE_LENGTH,
}
"""The length limit of every string and bytes field of the requests (matchmaking.proto), by name."""


def tables_pb(tables: Sequence[Table]) -> list[mm.TournamentTable]:
    return [
        mm.TournamentTable(
            round=t.round,
            table_number=t.number,
            game_id=t.game_id,
            player_ids=t.players,
            closer=t.result.closer if t.result is not None else "",
            finished=t.result is not None,
        )
        for t in tables
    ]


def tournament_pb(t: Tournament) -> mm.GetTournamentResponse:
    return mm.GetTournamentResponse(
        tournament_id=t.tournament_id,
        variant=t.variant,
        format=t.format,  # type: ignore[arg-type]
        player_ids=t.players,
        tables=tables_pb(t.tables),
        round=t.round,
        finished=t.finished,
        standings=[mm.TournamentStanding(player_id=p, points=points) for p, points in t.standings()],
    )


class MatchmakingServicer(mm_grpc.MatchmakingServiceServicer):
    """Each call runs where its partition is served (`Router`): here, or forwarded to the owner."""

    def __init__(self, app: MatchmakingApp, tokens: TokenVerifier, router: Router) -> None:
        self._app = app
        self._tokens = tokens
        self._router = router

    def _principal(self, context: Context) -> Principal:
        principal = authenticate(self._tokens, context.invocation_metadata())
        logs.caller.set(principal.subject)  # named if the call ends refused for authorization
        return principal

    def _operator(self, context: Context) -> Principal:
        principal = self._principal(context)
        if not principal.is_operator:
            raise PermissionDenied("operators_only", "only an operator may do this")
        return principal

    def _ticket_pb(self, status: TicketStatus) -> mm.WatchTicketResponse:
        seats = [mm.Seat(player_id=player, seat=seat) for player, seat in status.seats.items()]
        return mm.WatchTicketResponse(
            ticket_id=status.ticket.ticket_id,
            state=status.state,  # type: ignore[arg-type]
            game_id=status.game_id,
            seats=seats,
            waited_s=self._app.waited(status),
        )

    @unary_errors
    async def Enqueue(self, request: mm.EnqueueRequest, context: Context) -> mm.EnqueueResponse:
        check_lengths(request, LIMITS)
        caller = self._principal(context)
        app = self._app
        # Chosen by the instance that forwarded the call; a client's own choice is not taken.
        chosen = metadata(context, TICKET_ID)[:64] if self._router.forwarded(context, "Enqueue") else ""
        ticket_id = chosen or app.new_ticket_id(request.variant, request.private_code, request.casual)

        async def here() -> mm.EnqueueResponse:
            status = await app.enqueue(caller, request, ticket_id)
            return mm.EnqueueResponse(ticket_id=status.ticket.ticket_id, rating=status.ticket.rating)

        partition = app.queue_partition(request.variant, request.private_code, request.casual)
        return await self._router.unary(
            partition, "Enqueue", request, context, here, extra=((TICKET_ID, ticket_id),)
        )

    @unary_errors
    async def Cancel(self, request: mm.CancelRequest, context: Context) -> mm.CancelResponse:
        check_lengths(request, LIMITS)
        caller = self._principal(context)

        async def here() -> mm.CancelResponse:
            status = await self._app.cancel(caller, request.ticket_id)
            return mm.CancelResponse(state=status.state)  # type: ignore[arg-type]

        partition = self._app.partition_of(request.ticket_id)
        return await self._router.unary(partition, "Cancel", request, context, here)

    @stream_errors
    async def WatchTicket(
        self, request: mm.WatchTicketRequest, context: Context
    ) -> AsyncIterator[mm.WatchTicketResponse]:
        check_lengths(request, LIMITS)
        caller = self._principal(context)

        async def here() -> AsyncIterator[mm.WatchTicketResponse]:
            async for status in self._app.watch(caller, request.ticket_id):
                yield self._ticket_pb(status)

        partition = self._app.partition_of(request.ticket_id)
        async for message in self._router.watch(partition, request, context, here):
            yield message

    @unary_errors
    async def GetRating(self, request: mm.GetRatingRequest, context: Context) -> mm.GetRatingResponse:
        check_lengths(request, LIMITS)
        self._principal(context)
        games, rating = self._app.rating(request.variant, request.player_id)
        return mm.GetRatingResponse(rating=rating, games=games)

    @unary_errors
    async def CreateTournament(
        self, request: mm.CreateTournamentRequest, context: Context
    ) -> mm.CreateTournamentResponse:
        check_lengths(request, LIMITS)
        self._operator(context)
        app = self._app
        # In a partition this instance serves when it serves any (no hop), else at another's.
        partition = random.choice(sorted(app.owned)) if app.owned else random.randrange(app.partitions)

        async def here() -> mm.CreateTournamentResponse:
            tournament = await app.create_tournament(request, partition)
            return mm.CreateTournamentResponse(tournament_id=tournament.tournament_id)

        return await self._router.unary(partition, "CreateTournament", request, context, here)

    @unary_errors
    async def RegisterForTournament(
        self, request: mm.RegisterForTournamentRequest, context: Context
    ) -> mm.RegisterForTournamentResponse:
        check_lengths(request, LIMITS)
        caller = self._principal(context)

        async def here() -> mm.RegisterForTournamentResponse:
            count = await self._app.register(caller, request.tournament_id)
            return mm.RegisterForTournamentResponse(registered=count)

        partition = self._app.partition_of(request.tournament_id)
        return await self._router.unary(partition, "RegisterForTournament", request, context, here)

    @unary_errors
    async def StartTournament(
        self, request: mm.StartTournamentRequest, context: Context
    ) -> mm.StartTournamentResponse:
        check_lengths(request, LIMITS)
        self._operator(context)

        async def here() -> mm.StartTournamentResponse:
            tables = await self._app.start_tournament(request.tournament_id)
            return mm.StartTournamentResponse(tables=tables_pb(tables))

        partition = self._app.partition_of(request.tournament_id)
        return await self._router.unary(partition, "StartTournament", request, context, here)

    @unary_errors
    async def GetTournament(
        self, request: mm.GetTournamentRequest, context: Context
    ) -> mm.GetTournamentResponse:
        check_lengths(request, LIMITS)
        self._principal(context)

        async def here() -> mm.GetTournamentResponse:
            return tournament_pb(self._app.tournament(request.tournament_id))

        partition = self._app.partition_of(request.tournament_id)
        return await self._router.unary(partition, "GetTournament", request, context, here)

    # --- private tables ------------------------------------------------------------------------------

    def _table_pb(self, table: PrivateTable, caller: Principal) -> mm.PrivateTable:
        """The table as `caller` sees it: the short code is the host's to hand out, the requests the
        host's to answer (a player asking sees their own)."""
        host = caller.subject == table.host
        seat = table.seat_of(caller.subject)
        created = table.created
        shown = mm.PrivateTable(
            table_id=table.table_id,
            host=table.host,
            variant=created.variant,
            seats=created.seats,
            options=created.options,
            turn_timeout_ms=created.turn_timeout_ms,
            players=[_player_pb(p) for p in table.players],
            asking=[_player_pb(p) for p in table.asking if host or p.player_id == caller.subject],
            short_code=created.short_code if host else "",
            expires_at=table.expires_at,
            game_id=table.game_id,
            games=table.games,
            game_over=self._app.game_over(table),
            your_seat=seat,
            approval=bool(created.short_code),
        )
        if created.HasField("time_bank_ms"):
            shown.time_bank_ms = created.time_bank_ms
        return shown

    async def _at_table(
        self,
        name: str,
        request: AtTable,
        context: Context,
        act: Callable[[Principal], Awaitable[PrivateTable]],
        reply: Callable[[mm.PrivateTable], Reply],
    ) -> Reply:
        """One call on a table, where its partition is served (`name` forwards it there)."""
        check_lengths(request, LIMITS)
        caller = self._principal(context)
        app = self._app

        async def here() -> Reply:
            return reply(self._table_pb(await act(caller), caller))

        key = request.table_id
        if isinstance(request, mm.JoinPrivateTableRequest) and not key:
            key = private.code_key(request.short_code)
        return await self._router.unary(app.partition_of(key), name, request, context, here)

    @unary_errors
    async def CreatePrivateTable(
        self, request: mm.CreatePrivateTableRequest, context: Context
    ) -> mm.CreatePrivateTableResponse:
        check_lengths(request, LIMITS)
        caller = self._principal(context)
        app = self._app
        partition = random.choice(sorted(app.owned)) if app.owned else random.randrange(app.partitions)

        async def here() -> mm.CreatePrivateTableResponse:
            table = await app.create_private_table(caller, request, partition)
            return mm.CreatePrivateTableResponse(table=self._table_pb(table, caller))

        return await self._router.unary(partition, "CreatePrivateTable", request, context, here)

    @unary_errors
    async def GetPrivateTable(
        self, request: mm.GetPrivateTableRequest, context: Context
    ) -> mm.GetPrivateTableResponse:
        async def get(_caller: Principal) -> PrivateTable:
            return self._app.private_table(request.table_id)

        return await self._at_table(
            "GetPrivateTable", request, context, get, _reply(mm.GetPrivateTableResponse)
        )

    @unary_errors
    async def JoinPrivateTable(
        self, request: mm.JoinPrivateTableRequest, context: Context
    ) -> mm.JoinPrivateTableResponse:
        async def join(caller: Principal) -> PrivateTable:
            return await self._app.join_private(caller, request.table_id, request.short_code)

        return await self._at_table(
            "JoinPrivateTable", request, context, join, _reply(mm.JoinPrivateTableResponse)
        )

    @unary_errors
    async def ApprovePrivateSeat(
        self, request: mm.ApprovePrivateSeatRequest, context: Context
    ) -> mm.ApprovePrivateSeatResponse:
        async def approve(caller: Principal) -> PrivateTable:
            return await self._app.approve_private(caller, request.table_id, request.player_id)

        return await self._at_table(
            "ApprovePrivateSeat", request, context, approve, _reply(mm.ApprovePrivateSeatResponse)
        )

    @unary_errors
    async def RemovePrivateSeat(
        self, request: mm.RemovePrivateSeatRequest, context: Context
    ) -> mm.RemovePrivateSeatResponse:
        async def remove(caller: Principal) -> PrivateTable:
            return await self._app.remove_private(caller, request.table_id, request.player_id)

        return await self._at_table(
            "RemovePrivateSeat", request, context, remove, _reply(mm.RemovePrivateSeatResponse)
        )

    @unary_errors
    async def AcceptRematch(
        self, request: mm.AcceptRematchRequest, context: Context
    ) -> mm.AcceptRematchResponse:
        async def accept(caller: Principal) -> PrivateTable:
            return await self._app.accept_rematch(caller, request.table_id)

        return await self._at_table(
            "AcceptRematch", request, context, accept, _reply(mm.AcceptRematchResponse)
        )


def _reply(response: Callable[..., Reply]) -> Callable[[mm.PrivateTable], Reply]:
    """The call's own response message around the table."""
    return lambda table: response(table=table)


def _player_pb(player: private.Player) -> mm.PrivatePlayer:
    return mm.PrivatePlayer(
        player_id=player.player_id, name=player.name, bot=player.bot, rematch=player.rematch
    )
