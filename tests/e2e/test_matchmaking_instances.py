"""Three matchmaking processes share the queues; one is SIGKILLed mid-play and nothing is lost.

Twelve private queues of two-seat tables spread over the topic's partitions, so each instance owns
some. The first player of every queue enqueues through one instance and watches the ticket through the
next (so watches are forwarded, and those through the killed instance must reconnect). One instance
is killed while every queue waits for its second player; the second players then enqueue through the
two survivors at once. The killed instance's queues must come back on a survivor within a bound, every
ticket must be seated once (each watch ends SEATED at the game on the topic), and the topic must hold
each table once and each ticket in one table only.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.matchmaking.v1 import matchmaking_pb2_grpc as mm_grpc
from rummy_identity.testing import IdentityProcess, Player
from rummy_infra.local import free_port
from rummy_infra.serving import ServiceProcess
from rummy_matchmaking.routing import queue_partition
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.ownership import OwnerDirectory

PARTITIONS = 6
ROOMS = [f"room-{i}" for i in range(12)]
RECOVERY_BOUND_S = 45.0  # session timeout (10 s), rebalance, claim and fold, with room for CI load


def _request(room: str) -> mm.EnqueueRequest:
    return mm.EnqueueRequest(variant="rummy40", min_players=2, max_players=2, private_code=room)


class Instances:
    """Plain gRPC stubs, as a third-party client holds them; a call goes on to the next instance when
    one does not answer."""

    def __init__(self, processes: list[ServiceProcess]) -> None:
        self.processes = processes
        self._channels = {p.address: grpc.aio.insecure_channel(p.address) for p in processes}

    def stub(self, address: str) -> Any:
        return mm_grpc.MatchmakingServiceStub(self._channels[address])

    def after(self, first: int) -> list[str]:
        return [self.processes[(first + i) % len(self.processes)].address for i in range(len(self.processes))]

    async def enqueue(self, player: Player, room: str, first: int) -> str:
        while True:
            for address in self.after(first):
                try:
                    reply = await self.stub(address).Enqueue(
                        _request(room), metadata=player.auth(), timeout=40
                    )
                    return str(reply.ticket_id)
                except grpc.aio.AioRpcError as error:
                    if error.code() != grpc.StatusCode.UNAVAILABLE:
                        raise
            await asyncio.sleep(0.2)

    async def watch(self, player: Player, ticket_id: str, first: int) -> list[mm.WatchTicketResponse]:
        """The ticket's updates until it leaves the queue, reconnecting through another instance."""
        seen: list[mm.WatchTicketResponse] = []
        while True:
            for address in self.after(first):
                call = self.stub(address).WatchTicket(
                    mm.WatchTicketRequest(ticket_id=ticket_id), metadata=player.auth()
                )
                try:
                    async for update in call:
                        seen.append(update)
                        if update.state != mm.TICKET_STATE_QUEUED:
                            return seen
                except grpc.aio.AioRpcError as error:
                    if error.code() != grpc.StatusCode.UNAVAILABLE:
                        raise
            await asyncio.sleep(0.2)

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()


def _tables(bootstrap: str, topic: str) -> tuple[Counter[str], dict[str, str]]:
    """Each game's TableFormed count, and the game each ticket was seated at (a ticket seated twice
    fails here)."""
    games: Counter[str] = Counter()
    seated: dict[str, str] = {}
    with KafkaEventLog(bootstrap, topic, PARTITIONS) as log:
        for partition in range(PARTITIONS):
            for record in log.read_partition(partition):
                if record.event_type == "table_formed":
                    table = mm.MatchmakingEvent.FromString(record.payload).table_formed
                    games[table.game_id] += 1
                    for ticket_id in table.ticket_ids:
                        assert ticket_id not in seated, f"ticket {ticket_id} seated twice"
                        seated[ticket_id] = table.game_id
    return games, seated


@pytest.mark.integration
def test_three_instances_lose_no_ticket_when_one_is_killed(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str, tmp_path: Path, identity: IdentityProcess
) -> None:
    players = {room: (identity.player(f"{room}-a"), identity.player(f"{room}-b")) for room in ROOMS}
    topic = f"{unique_prefix}.rummy.matchmaking.events.v1"
    env = {
        **os.environ,
        "KAFKA_BOOTSTRAP": kafka_bootstrap,
        "REDIS_URL": redis_url,
        "MATCHMAKING_TOPIC": topic,
        "SCORING_TOPIC": f"{unique_prefix}.rummy.scoring.events.v1",
        "MATCHMAKING_KEY_PREFIX": f"{unique_prefix}:",
        "MATCHMAKING_PARTITIONS": str(PARTITIONS),
        "MATCHMAKING_PAIRING_INTERVAL_MS": "50",
        **identity.service_env(),
    }
    processes = []
    for i in range(3):
        address = f"127.0.0.1:{free_port()}"
        processes.append(
            ServiceProcess(
                "rummy_matchmaking", {**env, "MATCHMAKING_ADDRESS": address}, address, tmp_path / f"mm{i}.log"
            )
        )
    directory = OwnerDirectory(redis.Redis.from_url(redis_url), f"{unique_prefix}:", topic)
    partition = {room: queue_partition("rummy40", room, PARTITIONS) for room in ROOMS}

    async def scenario() -> None:
        instances = Instances(processes)
        try:
            deadline = time.monotonic() + 60
            while set(directory.read()) != set(range(PARTITIONS)) or len(
                set(directory.read().values())
            ) != len(processes):
                assert time.monotonic() < deadline, f"partitions not shared by all three: {directory.read()}"
                await asyncio.sleep(0.2)
            owners = directory.read()
            firsts = {
                room: await instances.enqueue(players[room][0], room, i % 3) for i, room in enumerate(ROOMS)
            }
            watches = {
                room: asyncio.create_task(instances.watch(players[room][0], firsts[room], (i + 1) % 3))
                for i, room in enumerate(ROOMS)
            }
            # Kill the instance owning the most queues, while every queue waits for its second player.
            by_owner = Counter(owners[partition[room]] for room in ROOMS)
            victim = next(p for p in processes if p.address == by_owner.most_common(1)[0][0])
            moved = [room for room in ROOMS if owners[partition[room]] == victim.address]
            assert moved, "the killed instance owns no queue"
            survivors = [p for p in processes if p is not victim]
            killed_at = time.monotonic()
            victim.kill()
            instances.processes = survivors

            async def second(i: int, room: str) -> tuple[str, float]:
                ticket_id = await instances.enqueue(players[room][1], room, i % 2)
                return ticket_id, time.monotonic() - killed_at

            seconds = dict(
                zip(ROOMS, await asyncio.gather(*(second(i, r) for i, r in enumerate(ROOMS))), strict=True)
            )
            recovery = max(seconds[room][1] for room in moved)
            print(f"\nkilled instance: its {len(moved)} queues took tickets {recovery:.1f} s after SIGKILL")
            assert recovery < RECOVERY_BOUND_S
            ends = {room: await asyncio.wait_for(watches[room], 60) for room in ROOMS}
            for room, seconds_ticket in seconds.items():
                second_end = await asyncio.wait_for(
                    instances.watch(players[room][1], seconds_ticket[0], 0), 60
                )
                assert second_end[-1].state == mm.TICKET_STATE_SEATED
                assert second_end[-1].game_id == ends[room][-1].game_id
            games, seated = _tables(kafka_bootstrap, topic)
            assert set(games.values()) == {1}, games  # each TableFormed once
            assert len(games) == len(ROOMS)
            for room in ROOMS:
                end = ends[room]
                assert end[-1].state == mm.TICKET_STATE_SEATED
                assert [u.state for u in end].count(mm.TICKET_STATE_SEATED) == 1  # told once
                assert seated[firsts[room]] == seated[seconds[room][0]] == end[-1].game_id
            now = directory.read()
            assert victim.address not in {now[partition[room]] for room in moved}
        finally:
            await instances.close()

    try:
        for process in processes:
            process.start()
        asyncio.run(scenario())
    finally:
        for process in processes:
            process.stop()
