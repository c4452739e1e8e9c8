"""The thin gRPC servicer: checks the request, reads through `ScoreReader` on a worker thread."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Final

import grpc
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy.scoring.v1 import scoring_pb2_grpc as sc_grpc
from rummy_service import limits
from rummy_service.errors import InvalidArgument, NotFound, quote, unary_errors

from rummy_scoring.store import ScoreReader

Context = grpc.aio.ServicerContext[Any, Any]
MAX_PAGE = 100
LIMITS: Final[Mapping[str, int]] = {
    "game_id": limits.GAME_ID,
    "tournament_id": limits.TOURNAMENT_ID,
    "player_id": limits.PLAYER_ID,
    "variant": limits.VARIANT,
    "period": limits.PERIOD,
}
"""The length limit of every string field of the requests (scoring.proto), by name: checked first, so
an oversized field is refused `too_long` before any store is read, and never echoed."""


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
        limits.check_lengths(request, LIMITS)
        _need(request.game_id, "game_id")
        # The match first: it is written with (or after) the game's last hand, so a match read first
        # always comes with every hand; hands read first could miss the last one committed in between.
        match = await asyncio.to_thread(self._reader.match, request.game_id)
        hands = await asyncio.to_thread(self._reader.hands, request.game_id)
        if not hands and match is None:
            raise NotFound("no_result", f"no scored hand of game {quote(request.game_id)}")
        response = sc.GetMatchResultResponse(hands=hands)
        if match is not None:
            response.match.CopyFrom(match)
        return response

    @unary_errors
    async def GetStandings(
        self, request: sc.GetStandingsRequest, context: Context
    ) -> sc.GetStandingsResponse:
        limits.check_lengths(request, LIMITS)
        _need(request.tournament_id, "tournament_id")
        rows = await asyncio.to_thread(self._reader.standings, request.tournament_id)
        return sc.GetStandingsResponse(
            standings=[sc.Standing(player_id=p, points=points, matches=n) for p, points, n in rows]
        )

    @unary_errors
    async def GetLeaderboard(
        self, request: sc.GetLeaderboardRequest, context: Context
    ) -> sc.GetLeaderboardResponse:
        limits.check_lengths(request, LIMITS)
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
        shown = await asyncio.to_thread(self._reader.names, [player for player, _ in rows])
        entries = [
            sc.LeaderboardEntry(rank=request.offset + i + 1, player_id=player, wins=wins, name=name)
            for i, ((player, wins), name) in enumerate(zip(rows, shown, strict=True))
        ]
        return sc.GetLeaderboardResponse(entries=entries, total=total)

    @unary_errors
    async def GetRatingHistory(
        self, request: sc.GetRatingHistoryRequest, context: Context
    ) -> sc.GetRatingHistoryResponse:
        limits.check_lengths(request, LIMITS)
        _need(request.player_id, "player_id")
        _need(request.variant, "variant")
        changes = await asyncio.to_thread(self._reader.rating_history, request.variant, request.player_id)
        rating = await asyncio.to_thread(self._reader.rating, request.variant, request.player_id)
        return sc.GetRatingHistoryResponse(changes=changes, ordinal=rating.ordinal)

    @unary_errors
    async def GetPayouts(self, request: sc.GetPayoutsRequest, context: Context) -> sc.GetPayoutsResponse:
        limits.check_lengths(request, LIMITS)
        _need(request.player_id, "player_id")
        rows = await asyncio.to_thread(self._reader.payouts, request.player_id)
        payouts = [sc.Payout(game_id=game_id, amount=amount) for game_id, amount in rows]
        return sc.GetPayoutsResponse(payouts=payouts, total=sum(amount for _, amount in rows))

    @unary_errors
    async def ListLiveGames(
        self, request: sc.ListLiveGamesRequest, context: Context
    ) -> sc.ListLiveGamesResponse:
        limits.check_lengths(request, LIMITS)
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
                    player_names=state.names,
                    rated=state.rated,
                )
                for game_id, started, state in rows
            ]
        )
