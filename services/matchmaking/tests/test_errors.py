"""Bad requests over gRPC get a precise status and reason, and write nothing to matchmaking's topic."""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path
from typing import Any

import grpc
import pytest
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.matchmaking.v1 import matchmaking_pb2_grpc as mm_grpc
from rummy_identity.testing import IdentityProcess
from rummy_matchmaking.config import MatchmakingConfig
from rummy_matchmaking.server import LIMITS
from rummy_matchmaking.service import open_journal, start_matchmaking
from rummy_service.errors import QUOTED_CHARS
from rummy_service.limits import text_fields


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


async def _scenario(
    config: MatchmakingConfig, identity: IdentityProcess
) -> list[tuple[grpc.StatusCode, str]]:
    running = await start_matchmaking(config)
    try:
        async with grpc.aio.insecure_channel(running.address) as channel:
            stub: Any = mm_grpc.MatchmakingServiceStub(channel)
            ann = identity.player("mm-ann").auth()
            guest = identity.guest().auth()
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
                    lambda: stub.Cancel(
                        mm.CancelRequest(ticket_id=queued.ticket_id),
                        metadata=identity.player("mm-bob").auth(),
                    )
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
                        metadata=identity.operator().auth(),
                    )
                ),
                await _status(
                    lambda: stub.GetTournament(mm.GetTournamentRequest(tournament_id="x"), metadata=ann)
                ),
                await _status(  # queueing someone else: they never asked
                    lambda: stub.Enqueue(
                        mm.EnqueueRequest(variant="rummy40", min_players=2, party=["someone"]), metadata=ann
                    )
                ),
                await _status(  # a guest in a rated queue
                    lambda: stub.Enqueue(mm.EnqueueRequest(variant="rummy40", min_players=2), metadata=guest)
                ),
            ]
            assert _records(config) == before  # nothing refused was written
            return statuses
    finally:
        await running.stop()


def test_bad_requests_get_their_status_and_change_nothing(tmp_path: Path, identity: IdentityProcess) -> None:
    config = MatchmakingConfig(
        address="127.0.0.1:0", data_dir=str(tmp_path), pairing_interval_ms=50, identity=identity.address
    )
    codes = [(code, reason.split(":")[0]) for code, reason in asyncio.run(_scenario(config, identity))]
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
        (grpc.StatusCode.FAILED_PRECONDITION, "party_needs_consent"),
        (grpc.StatusCode.FAILED_PRECONDITION, "account_required"),
    ]


def test_every_string_field_has_a_limit() -> None:
    for method in mm.DESCRIPTOR.services_by_name["MatchmakingService"].methods:
        assert text_fields(method.input_type) <= set(LIMITS), method.name


@pytest.fixture(params=["embedded", pytest.param("kafka", marks=pytest.mark.integration)])
def journal(request: pytest.FixtureRequest, tmp_path: Path, identity: IdentityProcess) -> MatchmakingConfig:
    """Matchmaking on its embedded journal, and on real Kafka (where the 1 MB code was UNKNOWN)."""
    if request.param == "embedded":
        return MatchmakingConfig(
            address="127.0.0.1:0", data_dir=str(tmp_path), pairing_interval_ms=50, identity=identity.address
        )
    prefix = request.getfixturevalue("unique_prefix")
    return MatchmakingConfig(
        address="127.0.0.1:0",
        kafka=request.getfixturevalue("kafka_bootstrap"),
        topic=f"{prefix}.rummy.matchmaking.events.v1",
        scoring_topic=f"{prefix}.rummy.scoring.events.v1",
        pairing_interval_ms=50,
        identity=identity.address,
    )


def test_oversized_fields_are_refused_and_never_echoed(
    journal: MatchmakingConfig, identity: IdentityProcess
) -> None:
    """A 1 MB private code used to reach the journal (on Kafka: UNKNOWN, the record too large)."""
    huge = "x" * 1_000_000
    config = journal

    async def scenario() -> list[tuple[grpc.StatusCode, str]]:
        running = await start_matchmaking(config)
        try:
            async with grpc.aio.insecure_channel(running.address) as channel:
                stub: Any = mm_grpc.MatchmakingServiceStub(channel)
                ann = identity.player("mm-ann").auth()
                before = _records(config)
                enqueue: dict[str, Any] = {"variant": "kalooki", "min_players": 3}
                at_limit = "y" * LIMITS["ticket_id"]  # not too long, yet quoted only in part
                calls = [
                    functools.partial(
                        stub.Enqueue, mm.EnqueueRequest(**enqueue, private_code=huge), metadata=ann
                    ),
                    functools.partial(
                        stub.Enqueue, mm.EnqueueRequest(**enqueue, party=["bob", huge]), metadata=ann
                    ),
                    functools.partial(stub.Enqueue, mm.EnqueueRequest(variant=huge), metadata=ann),
                    functools.partial(stub.Cancel, mm.CancelRequest(ticket_id=huge), metadata=ann),
                    functools.partial(stub.Cancel, mm.CancelRequest(ticket_id=at_limit), metadata=ann),
                ]
                statuses = [await _status(call) for call in calls]
                assert _records(config) == before
                return statuses
        finally:
            await running.stop()

    statuses = asyncio.run(scenario())
    assert [(code, reason.split(":")[0]) for code, reason in statuses] == [
        *[(grpc.StatusCode.INVALID_ARGUMENT, "too_long")] * 4,
        (grpc.StatusCode.NOT_FOUND, "no_such_ticket"),
    ]
    for _, reason in statuses:
        assert "x" * QUOTED_CHARS not in reason and "y" * (QUOTED_CHARS + 1) not in reason
