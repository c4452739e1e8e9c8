"""The thin gRPC servicer: checks the request, reads through `ScoreReader` on a worker thread."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy.scoring.v1 import scoring_pb2_grpc as sc_grpc
from rummy_service.errors import InvalidArgument, NotFound, unary_errors

from rummy_scoring.store import ScoreReader

Context = grpc.aio.ServicerContext[Any, Any]
MAX_PAGE = 100


def _need(value: str, name: str) -> None:
    if not value:
        raise InvalidArgument(f"missing_{name}", f"{name} is required")


class ScoringServicer(sc_grpc.ScoringServiceServicer):
    """Query RPCs; results are public (the leaderboard and standings are published anyway)."""

    def __init__(self, reader: ScoreReader) -> None:
        self._reader = reader

    @unary_errors
    async def GetMatchResult(
        self, request: sc.GetMatchResultRequest, context: Context
    ) -> sc.GetMatchResultResponse:
        _need(request.game_id, "game_id")
        hands = await asyncio.to_thread(self._reader.hands, request.game_id)
        match = await asyncio.to_thread(self._reader.match, request.game_id)
        if not hands and match is None:
            raise NotFound("no_result", f"no scored hand of game {request.game_id!r}")
        response = sc.GetMatchResultResponse(hands=hands)
        if match is not None:
            response.match.CopyFrom(match)
        return response

    @unary_errors
    async def GetStandings(
        self, request: sc.GetStandingsRequest, context: Context
    ) -> sc.GetStandingsResponse:
        _need(request.tournament_id, "tournament_id")
        rows = await asyncio.to_thread(self._reader.standings, request.tournament_id)
        return sc.GetStandingsResponse(
            standings=[sc.Standing(player_id=p, points=points, matches=n) for p, points, n in rows]
        )

    @unary_errors
    async def GetLeaderboard(
        self, request: sc.GetLeaderboardRequest, context: Context
    ) -> sc.GetLeaderboardResponse:
        _need(request.variant, "variant")
        period = request.period or "all"
        if period != "all" and not period.startswith(("day:", "week:")):
            raise InvalidArgument("bad_period", "period is 'all', 'day:YYYY-MM-DD' or 'week:YYYY-Www'")
        limit = request.limit or 20
        if limit > MAX_PAGE:
            raise InvalidArgument("bad_limit", f"limit is at most {MAX_PAGE}")
        rows, total = await asyncio.to_thread(
            self._reader.leaderboard, request.variant, period, request.offset, limit
        )
        entries = [
            sc.LeaderboardEntry(rank=request.offset + i + 1, player_id=player, wins=wins)
            for i, (player, wins) in enumerate(rows)
        ]
        return sc.GetLeaderboardResponse(entries=entries, total=total)

    @unary_errors
    async def GetRatingHistory(
        self, request: sc.GetRatingHistoryRequest, context: Context
    ) -> sc.GetRatingHistoryResponse:
        _need(request.player_id, "player_id")
        _need(request.variant, "variant")
        changes = await asyncio.to_thread(self._reader.rating_history, request.variant, request.player_id)
        rating = await asyncio.to_thread(self._reader.rating, request.variant, request.player_id)
        return sc.GetRatingHistoryResponse(changes=changes, ordinal=rating.ordinal)

    @unary_errors
    async def GetPayouts(self, request: sc.GetPayoutsRequest, context: Context) -> sc.GetPayoutsResponse:
        _need(request.player_id, "player_id")
        rows = await asyncio.to_thread(self._reader.payouts, request.player_id)
        payouts = [sc.Payout(game_id=game_id, amount=amount) for game_id, amount in rows]
        return sc.GetPayoutsResponse(payouts=payouts, total=sum(amount for _, amount in rows))

    @unary_errors
    async def ListLiveGames(
        self, request: sc.ListLiveGamesRequest, context: Context
    ) -> sc.ListLiveGamesResponse:
        limit = request.limit or 20
        if limit > MAX_PAGE:
            raise InvalidArgument("bad_limit", f"limit is at most {MAX_PAGE}")
        rows = await asyncio.to_thread(self._reader.live_games, limit)
        return sc.ListLiveGamesResponse(
            games=[
                sc.LiveGame(
                    game_id=game_id,
                    variant=state.variant,
                    player_ids=state.players,
                    started_at=started,
                    deals_scored=state.deals,
                )
                for game_id, started, state in rows
            ]
        )
