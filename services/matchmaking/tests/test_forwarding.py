"""Two matchmaking instances on Kafka + Redis: any call works through either one.

Both run in this process but share nothing except Kafka and Redis, as two processes would. The group
splits the partitions; a call about a queue, ticket or tournament of the other's partition is
forwarded there (its answer, or its refusal with the owner's status, comes back; a private table's
short code is routed to its table's partition), a call that was
forwarded already (its marker signed with the instances' key) is never forwarded again, a client's
forged marker and ticket id are ignored (the call is a direct one), and when one instance stops, the
other folds its partitions and serves its tickets and tournaments.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.matchmaking.v1 import matchmaking_pb2_grpc as mm_grpc
from rummy_identity.testing import IdentityProcess
from rummy_matchmaking.config import MatchmakingConfig
from rummy_matchmaking.forwarding import TICKET_ID
from rummy_matchmaking.service import SERVICE_NAME, RunningMatchmaking, open_journal, start_matchmaking
from rummy_service.forwarding import FORWARDED, ForwardMarks, forwarding_key
from rummy_store.partitioning import partition_for

PARTITIONS = 4


async def _until(condition: Callable[[], bool], what: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)


def _room(instance: RunningMatchmaking, prefix: str) -> str:
    """A private code whose queue `instance` owns."""
    return next(
        code
        for code in (f"{prefix}-{i}" for i in range(1000))
        if instance.app.queue_partition("rummy40", code) in instance.app.owned
    )


@pytest.mark.integration
def test_calls_work_through_either_instance_and_survive_a_stop(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str, identity: IdentityProcess
) -> None:
    def _auth(name: str) -> tuple[tuple[str, str], ...]:
        return identity.player(f"fw-{name}").auth()

    config = MatchmakingConfig(
        address="127.0.0.1:0",
        kafka=kafka_bootstrap,
        redis=redis_url,
        topic=f"{unique_prefix}.rummy.matchmaking.events.v1",
        scoring_topic=f"{unique_prefix}.rummy.scoring.events.v1",
        key_prefix=f"{unique_prefix}:",
        partitions=PARTITIONS,
        pairing_interval_ms=20,
        identity=identity.address,
    )

    async def scenario() -> None:
        first = await start_matchmaking(config)
        second = await start_matchmaking(config)
        running = [first, second]
        channels: list[grpc.aio.Channel] = []

        def stub(instance: RunningMatchmaking) -> Any:
            channels.append(grpc.aio.insecure_channel(instance.address))
            return mm_grpc.MatchmakingServiceStub(channels[-1])

        try:
            await _until(
                lambda: (
                    bool(first.app.owned)
                    and bool(second.app.owned)
                    and first.app.owned | second.app.owned == set(range(PARTITIONS))
                    and not first.app.owned & second.app.owned
                ),
                "the group to split the partitions",
            )
            await _until(
                lambda: all(
                    i.ownership is not None and i.ownership.owner_of(p) is not None
                    for i in (first, second)
                    for p in set(range(PARTITIONS)) - i.app.owned
                ),
                "each to know where the other's partitions are",
            )
            room = _room(second, "room")
            # Enqueued through the first instance: the queue is the second's, which writes the ticket.
            request = mm.EnqueueRequest(variant="rummy40", min_players=2, max_players=2, private_code=room)
            ann = await stub(first).Enqueue(request, metadata=_auth("ann"))
            assert ann.ticket_id in second.app.tickets and ann.ticket_id not in first.app.tickets
            assert second.app.partition_of(ann.ticket_id) == second.app.queue_partition("rummy40", room)

            # A refusal comes back with the owner's status; a forwarded call is not forwarded again.
            with pytest.raises(grpc.aio.AioRpcError) as again:
                await stub(first).Enqueue(request, metadata=_auth("ann"))
            assert again.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert (again.value.details() or "").startswith("already_queued")
            peer = ForwardMarks(forwarding_key(config.forward_secret, SERVICE_NAME))  # as an instance
            bound = ((TICKET_ID, "t-peer"),)
            marked = (*bound, (FORWARDED, peer.mark("Enqueue", bound)))
            with pytest.raises(grpc.aio.AioRpcError) as looped:
                await stub(first).Enqueue(request, metadata=(*_auth("bea"), *marked))
            assert looped.value.code() == grpc.StatusCode.UNAVAILABLE
            assert (looped.value.details() or "").startswith("not_owner")
            # A client's own marker (unsigned, signed for another method or with another key) makes
            # a direct call: forwarded on to the owner, the ticket id it names not taken.
            strangers = ForwardMarks(forwarding_key("another platform's forward secret", SERVICE_NAME))
            forged = [
                "1",
                peer.mark("Cancel", bound),
                strangers.mark("Enqueue", bound),
                peer.mark("Enqueue", bound, now=time.time() - 3600),
            ]
            for player, marker in zip(("bea", "cid", "dot", "eve"), forged, strict=True):
                alone = mm.EnqueueRequest(  # a room each, so none is seated with ann
                    variant="rummy40", min_players=2, max_players=2, private_code=_room(second, player)
                )
                answer = await stub(first).Enqueue(
                    alone, metadata=(*_auth(player), *bound, (FORWARDED, marker))
                )
                assert answer.ticket_id != "t-peer" and answer.ticket_id in second.app.tickets

            # A tournament made through one instance, registered for and read through the other.
            operator = identity.operator().auth()
            created = await stub(first).CreateTournament(
                mm.CreateTournamentRequest(
                    variant="rummy40", format=mm.TOURNAMENT_FORMAT_SERIES, rounds=1, table_size=2
                ),
                metadata=operator,
            )
            tid = created.tournament_id
            away = second if tid in first.app.tournaments else first
            for player in ("p1", "p2"):
                await stub(away).RegisterForTournament(
                    mm.RegisterForTournamentRequest(tournament_id=tid), metadata=_auth(player)
                )
            started = await stub(away).StartTournament(
                mm.StartTournamentRequest(tournament_id=tid), metadata=operator
            )
            players = [identity.player(f"fw-{name}").id for name in ("p1", "p2")]
            assert [list(t.player_ids) for t in started.tables] == [players]
            seen = await stub(away).GetTournament(
                mm.GetTournamentRequest(tournament_id=tid), metadata=operator
            )
            assert list(seen.player_ids) == players and seen.round == 1

            # A private table the second instance holds, joined by its short code and approved
            # through the first (each call forwarded to the table's owner).
            table = (
                await stub(second).CreatePrivateTable(
                    mm.CreatePrivateTableRequest(variant="rummy40", seats=3, short_code=True),
                    metadata=_auth("host"),
                )
            ).table
            assert (
                table.table_id in second.app.private
                and second.app.partition_of(table.table_id) in second.app.owned
            )
            join = mm.JoinPrivateTableRequest(short_code=table.short_code)
            await stub(first).JoinPrivateTable(join, metadata=_auth("guest"))
            guest = identity.player("fw-guest").id
            approve = mm.ApprovePrivateSeatRequest(table_id=table.table_id, player_id=guest)
            seated = (await stub(first).ApprovePrivateSeat(approve, metadata=_auth("host"))).table
            assert [p.player_id for p in seated.players] == [table.host, guest] and not seated.game_id

            # The queue's owner stops: the first instance takes its partitions, folds the ticket, and
            # the second player's enqueue through it seats both.
            watch = stub(first).WatchTicket(
                mm.WatchTicketRequest(ticket_id=ann.ticket_id), metadata=_auth("ann")
            )
            assert (await anext(aiter(watch))).state == mm.TICKET_STATE_QUEUED
            running.remove(second)
            await second.stop()
            await _until(lambda: first.app.owned == set(range(PARTITIONS)), "the first to own everything")
            assert first.app.tickets[ann.ticket_id].state == mm.TICKET_STATE_QUEUED
            assert tid in first.app.tournaments and first.app.tournament(tid).round == 1
            await stub(first).Enqueue(request, metadata=_auth("bob"))
            # ... and the private table: its last seat taken there starts its game.
            third = mm.JoinPrivateTableRequest(short_code=table.short_code)
            await stub(first).JoinPrivateTable(third, metadata=_auth("third"))
            third_id = identity.player("fw-third").id
            approve = mm.ApprovePrivateSeatRequest(table_id=table.table_id, player_id=third_id)
            full = (await stub(first).ApprovePrivateSeat(approve, metadata=_auth("host"))).table
            assert len(full.players) == 3 and full.game_id.startswith("pt-")
            updates = [update async for update in watch]  # forwarded, then served here: each change once
            assert [u.state for u in updates] == [mm.TICKET_STATE_SEATED]
            assert updates[0].game_id == first.app.tickets[ann.ticket_id].game_id
        finally:
            for channel in channels:
                await channel.close()
            for instance in running:
                await instance.stop()

    asyncio.run(scenario())
    games: list[str] = []
    with open_journal(config) as journal:
        for partition in range(PARTITIONS):
            for record in journal.read_partition(partition):
                if record.event_type == "table_formed":
                    event = mm.MatchmakingEvent.FromString(record.payload)
                    games.append(event.table_formed.game_id)
                    game = event.table_formed
                    if game.game_id.startswith("pt-"):  # a private table's: under the table's key,
                        assert record.game_id not in ("", game.game_id)  # in the table's partition
                        assert partition_for(game.game_id, PARTITIONS) == partition
                    else:
                        assert record.game_id == (game.tournament_id or game.game_id)
    assert len(games) == len(set(games)) == 3  # the queue table, the tournament's, the private one
