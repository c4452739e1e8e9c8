"""Bad requests over gRPC get a precise status and reason, and write nothing to matchmaking's topic."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import grpc
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.matchmaking.v1 import matchmaking_pb2_grpc as mm_grpc
from rummy_matchmaking.config import MatchmakingConfig
from rummy_matchmaking.service import open_journal, start_matchmaking
from rummy_service.auth import DEV_SECRET, TokenIssuer

TOKENS = TokenIssuer(DEV_SECRET)


def _as(player: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {TOKENS.issue(player)}"),)


async def _status(call: Any) -> tuple[grpc.StatusCode, str]:
    try:
        reply = call()
        if hasattr(reply, "__aiter__"):
            async for _ in reply:
                pass
        else:
            await reply
    except grpc.aio.AioRpcError as error:
        return error.code(), error.details() or ""
    raise AssertionError("the call succeeded")


def _records(config: MatchmakingConfig) -> int:
    with open_journal(config) as log:
        return sum(log.end_offset(p) for p in range(log.partitions))


async def _scenario(config: MatchmakingConfig) -> list[tuple[grpc.StatusCode, str]]:
    running = await start_matchmaking(config)
    try:
        async with grpc.aio.insecure_channel(running.address) as channel:
            stub: Any = mm_grpc.MatchmakingServiceStub(channel)
            ann = _as("ann")
            queued = await stub.Enqueue(mm.EnqueueRequest(variant="kalooki", min_players=3), metadata=ann)
            before = _records(config)
            statuses = [
                await _status(
                    lambda: stub.Enqueue(mm.EnqueueRequest(variant="go", min_players=3), metadata=ann)
                ),
                await _status(lambda: stub.Enqueue(mm.EnqueueRequest(variant="kalooki", min_players=3))),
                await _status(
                    lambda: stub.Enqueue(mm.EnqueueRequest(variant="kalooki", min_players=3), metadata=ann)
                ),
                await _status(lambda: stub.Cancel(mm.CancelRequest(ticket_id="nope"), metadata=ann)),
                await _status(
                    lambda: stub.Cancel(mm.CancelRequest(ticket_id=queued.ticket_id), metadata=_as("bob"))
                ),
                await _status(
                    lambda: stub.WatchTicket(mm.WatchTicketRequest(ticket_id="nope"), metadata=ann)
                ),
                await _status(
                    lambda: stub.CreateTournament(
                        mm.CreateTournamentRequest(
                            variant="contract", format=mm.TOURNAMENT_FORMAT_ROTATION, rounds=3
                        ),
                        metadata=ann,
                    )
                ),
                await _status(
                    lambda: stub.CreateTournament(
                        mm.CreateTournamentRequest(
                            variant="contract", format=mm.TOURNAMENT_FORMAT_ROTATION, rounds=9
                        ),
                        metadata=(("authorization", f"Bearer {TOKENS.issue('ops', 'operator')}"),),
                    )
                ),
                await _status(
                    lambda: stub.GetTournament(mm.GetTournamentRequest(tournament_id="x"), metadata=ann)
                ),
            ]
            assert _records(config) == before  # nothing refused was written
            return statuses
    finally:
        await running.stop()


def test_bad_requests_get_their_status_and_change_nothing(tmp_path: Path) -> None:
    config = MatchmakingConfig(address="127.0.0.1:0", data_dir=str(tmp_path), pairing_interval_ms=50)
    codes = [(code, reason.split(":")[0]) for code, reason in asyncio.run(_scenario(config))]
    assert codes == [
        (grpc.StatusCode.INVALID_ARGUMENT, "unknown_variant"),
        (grpc.StatusCode.UNAUTHENTICATED, "unauthenticated"),
        (grpc.StatusCode.FAILED_PRECONDITION, "already_queued"),
        (grpc.StatusCode.NOT_FOUND, "no_such_ticket"),
        (grpc.StatusCode.PERMISSION_DENIED, "not_your_ticket"),
        (grpc.StatusCode.NOT_FOUND, "no_such_ticket"),
        (grpc.StatusCode.PERMISSION_DENIED, "operators_only"),
        (grpc.StatusCode.INVALID_ARGUMENT, "bad_rounds"),
        (grpc.StatusCode.NOT_FOUND, "no_such_tournament"),
    ]
