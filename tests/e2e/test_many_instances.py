"""The platform as a cluster: three engines, three matchmaking and three scoring processes on a 3-node
Kafka cluster (replication 3, min ISR 2) and Redis, and one of each SIGKILLed mid-play.

Players queue in private two-seat kalooki rooms spread over matchmaking's partitions (through plain
gRPC stubs on any matchmaking instance, going on to the next when one does not answer); bots play every
game through the SDK from the first engine's address (the SDK finds each game's owner). Once every
first-wave game is under way, three are killed together: the engine owning most of them (not the first),
the matchmaking instance owning most second-wave queues, and the scoring instance holding the outbox's
lease. Once the survivors have claimed the engine's partitions, a second wave of rooms queues through the
surviving matchmaking instances. Every table is formed once, every game is played to its end once, and
every result is scored once: the survivors' answers equal one scoring instance alone on the same
records, and the scoring topic holds each game's result once.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis
from rummy.game.v1 import events_pb2 as ev
from rummy.game.v1 import game_service_pb2 as gs
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.matchmaking.v1 import matchmaking_pb2_grpc as mm_grpc
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy_client import GameClient, RpcFailure
from rummy_client.bots import BotPlayer
from rummy_identity.testing import IdentityProcess, Player
from rummy_infra.kafka_cluster import KafkaCluster
from rummy_infra.local import free_port
from rummy_infra.serving import ServiceProcess
from rummy_matchmaking.routing import queue_partition
from rummy_scoring.handlers import Handlers
from rummy_scoring.store import ScoreReader
from rummy_store import EventRecord
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.ownership import OwnerDirectory
from rummy_store.partitioning import partition_for

PARTITIONS = 6
FIRST_WAVE = [f"room-{i}" for i in range(6)]
SECOND_WAVE = [f"room-{i}" for i in range(6, 9)]
PACE_S = 0.1  # a bot's think time until the kills: the first wave's games are still open at them


class Matchmaking:
    """Plain stubs on every matchmaking instance; a call goes on to the next when one does not answer."""

    def __init__(self, addresses: list[str]) -> None:
        self.addresses = addresses
        self._channels = {a: grpc.aio.insecure_channel(a) for a in addresses}

    async def _each(self, first: int, call: Any) -> Any:
        """`call(stub)` on the instances in turn from `first` until one answers something (not None)."""
        while True:
            for i in range(len(self.addresses)):
                address = self.addresses[(first + i) % len(self.addresses)]
                try:
                    answer = await call(mm_grpc.MatchmakingServiceStub(self._channels[address]))
                except grpc.aio.AioRpcError as error:
                    if error.code() != grpc.StatusCode.UNAVAILABLE:
                        raise
                    continue
                if answer is not None:
                    return answer
            await asyncio.sleep(0.2)

    async def seat(self, player: Player, room: str, first: int) -> mm.WatchTicketResponse:
        """Queue `player` in `room`; the ticket's SEATED update."""
        request = mm.EnqueueRequest(variant="kalooki", min_players=2, max_players=2, private_code=room)
        ticket = await self._each(first, lambda s: s.Enqueue(request, metadata=player.auth(), timeout=40))

        async def watch(stub: Any) -> mm.WatchTicketResponse | None:
            call = stub.WatchTicket(mm.WatchTicketRequest(ticket_id=ticket.ticket_id), metadata=player.auth())
            async for update in call:
                if update.state != mm.TICKET_STATE_QUEUED:
                    return update  # type: ignore[no-any-return]
            return None  # the stream ended with the ticket queued: watch it again

        seated: mm.WatchTicketResponse = await self._each(first + 1, watch)
        assert seated.state == mm.TICKET_STATE_SEATED, seated
        return seated

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()


class CountingClient(GameClient):
    """A player's client that thinks `pace_s` before each move and counts the moves accepted. Once the
    kills are done the pace has served (games open across them) and drops to 0: the games end sooner."""

    moves = 0
    pace_s = PACE_S

    async def submit(
        self,
        game_id: str,
        seat: int,
        action: gs.Action,
        command_id: str | None = None,
        *,
        include_view: bool = False,
    ) -> gs.SubmitActionResponse:
        if CountingClient.pace_s > 0:
            await asyncio.sleep(CountingClient.pace_s)
        answer = await super().submit(game_id, seat, action, command_id, include_view=include_view)
        CountingClient.moves += 1
        return answer


async def _play(engine: str, player: Player, seated: mm.WatchTicketResponse) -> None:
    seat = next(s for s in seated.seats if s.player_id == player.id)  # a seat's token is the player's own
    async with CountingClient(engine, player.token, retry_for_s=90) as client:
        deadline = time.monotonic() + 60
        while True:  # the engine creates the game from TableFormed, asynchronously
            try:
                await client.view(seated.game_id, seat.seat)
                break
            except RpcFailure as failure:
                if failure.status != grpc.StatusCode.NOT_FOUND or time.monotonic() > deadline:
                    raise
            await asyncio.sleep(0.2)
        await BotPlayer(client, seated.game_id, seat.seat).play()


async def _room(
    mms: Matchmaking, engine: str, room: str, pair: list[Player], first: int, *, games: dict[str, str]
) -> str:
    """`pair` meet in `room` (noted in `games`) and play their game to the end; returns its id."""
    seated = await asyncio.gather(*(mms.seat(pair[p], room, first + p) for p in range(2)))
    assert seated[0].game_id == seated[1].game_id
    games[room] = seated[0].game_id
    await asyncio.gather(*(_play(engine, pair[p], seated[p]) for p in range(2)))
    return str(seated[0].game_id)


def _records(bootstrap: str, topic: str) -> list[EventRecord]:
    with KafkaEventLog(bootstrap, topic, PARTITIONS) as log:
        return [r for p in range(PARTITIONS) for r in log.read_partition(p)]


def _answers(reader: ScoreReader, games: list[str], players: list[str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for game in games:
        out[f"hands {game}"] = reader.hands(game)
        out[f"match {game}"] = reader.match(game)
    for player in players:
        out[f"rating {player}"] = reader.rating("kalooki", player)
        out[f"history {player}"] = reader.rating_history("kalooki", player)
        out[f"payouts {player}"] = sorted(reader.payouts(player))
    out["board"] = reader.leaderboard("kalooki", "all", 0, 100)
    return out


@pytest.mark.integration
def test_three_of_each_service_one_of_each_killed_mid_play(
    kafka_cluster: KafkaCluster, redis_url: str, unique_prefix: str, tmp_path: Path, identity: IdentityProcess
) -> None:
    pairs = {room: [identity.player(f"{room}-{p}") for p in range(2)] for room in FIRST_WAVE + SECOND_WAVE}
    kafka_bootstrap = kafka_cluster.bootstrap  # replication 3, min ISR 2: as deployed
    topics = {
        "ENGINE_TOPIC": f"{unique_prefix}.rummy.game.events.v1",
        "MATCHMAKING_TOPIC": f"{unique_prefix}.rummy.matchmaking.events.v1",
        "SCORING_TOPIC": f"{unique_prefix}.rummy.scoring.events.v1",
    }
    prefix = f"{unique_prefix}:"
    env = {
        **os.environ,
        **topics,
        "KAFKA_BOOTSTRAP": kafka_bootstrap,
        "REDIS_URL": redis_url,
        "ENGINE_TABLES": topics["MATCHMAKING_TOPIC"],
        "ENGINE_KEY_PREFIX": prefix,
        "MATCHMAKING_KEY_PREFIX": prefix,
        "SCORING_KEY_PREFIX": prefix,
        "SCORING_GROUP": f"{unique_prefix}.scoring",
        "ENGINE_PARTITIONS": str(PARTITIONS),
        "ENGINE_FENCE_GROUPS": "3",  # two partitions a group: each engine owns one group whole
        "MATCHMAKING_PARTITIONS": str(PARTITIONS),
        "SCORING_PARTITIONS": str(PARTITIONS),
        "MATCHMAKING_PAIRING_INTERVAL_MS": "50",
    }

    def process(module: str, variable: str, name: str) -> ServiceProcess:
        address = f"127.0.0.1:{free_port()}"
        # Engines forward the tables of another's partitions with their own credential.
        own = identity.service_env("engine" if module == "rummy_engine" else "")
        return ServiceProcess(module, {**env, **own, variable: address}, address, tmp_path / f"{name}.log")

    engines = [process("rummy_engine", "ENGINE_ADDRESS", f"engine{i}") for i in range(3)]
    matchmakers = [process("rummy_matchmaking", "MATCHMAKING_ADDRESS", f"mm{i}") for i in range(3)]
    scorers = [process("rummy_scoring", "SCORING_ADDRESS", f"scoring{i}") for i in range(3)]
    figures: dict[str, float] = {}
    client = redis.Redis.from_url(redis_url)
    reader = ScoreReader(client, prefix)

    def busiest(
        processes: list[ServiceProcess], topic: str, partitions: list[int]
    ) -> tuple[ServiceProcess, int]:
        """The instance owning most of `partitions` (each counted as often as listed) of `topic`, by
        its owners directory, and how many it owns."""
        owners = OwnerDirectory(client, prefix, topic).read()
        counts = Counter(owners[p] for p in partitions)
        chosen = max(processes, key=lambda process: counts[process.address])
        return chosen, counts[chosen.address]

    async def scenario() -> list[str]:
        mms = Matchmaking([m.address for m in matchmakers])
        entry = engines[0].address
        CountingClient.pace_s = PACE_S
        seated: dict[str, str] = {}
        try:
            first = [
                asyncio.create_task(_room(mms, entry, room, pairs[room], i, games=seated))
                for i, room in enumerate(FIRST_WAVE)
            ]
            deadline = time.monotonic() + 90
            while len(seated) < len(FIRST_WAVE) or CountingClient.moves < 6 * len(FIRST_WAVE):
                assert time.monotonic() < deadline, f"play did not start ({CountingClient.moves} moves)"
                for task in first:
                    if task.done():
                        raise AssertionError(f"a first-wave room ended before the kills: {task.result()}")
                await asyncio.sleep(0.1)
            # The engine owning most open games (not the one clients are given: the SDK finds the
            # others from it), the matchmaking instance owning most second-wave queues, and the scoring
            # instance holding the outbox's lease (the first started).
            open_games = [partition_for(game, PARTITIONS) for game in seated.values()]
            queues = [queue_partition("kalooki", room, PARTITIONS) for room in SECOND_WAVE]
            engine, games_moved = busiest(engines[1:], topics["ENGINE_TOPIC"], open_games)
            matchmaker, queues_moved = busiest(matchmakers, topics["MATCHMAKING_TOPIC"], queues)
            for victim in (engine, matchmaker, scorers[0]):
                victim.kill()
            killed_at = time.monotonic()
            CountingClient.pace_s = 0.0
            figures["moves before the kills"] = CountingClient.moves
            figures["open games on the killed engine"] = games_moved
            figures["second-wave queues on the killed matchmaking instance"] = queues_moved
            mms.addresses = [m.address for m in matchmakers if m is not matchmaker]
            # The second wave queues once the survivors claimed the killed engine's partitions: a
            # TableFormed taken while the owners directory still names a dead engine is forwarded there
            # and waits out the forward's 60 s, holding the tables behind it (rummy_engine.tables).
            engines_directory = OwnerDirectory(client, prefix, topics["ENGINE_TOPIC"])
            while engine.address in engines_directory.read().values():
                assert time.monotonic() - killed_at < 60, "the killed engine's partitions were not claimed"
                await asyncio.sleep(0.1)
            figures["SIGKILL to the engine's partitions claimed (s)"] = time.monotonic() - killed_at
            second = [
                asyncio.create_task(_room(mms, entry, room, pairs[room], i, games=seated))
                for i, room in enumerate(SECOND_WAVE)
            ]
            games = await asyncio.wait_for(asyncio.gather(*first, *second), 150)
            figures["SIGKILLs to every game ended (s)"] = time.monotonic() - killed_at
            return games
        finally:
            await mms.close()

    try:
        scorers[0].start(90)
        starts = [
            threading.Thread(target=p.start, args=(90,)) for p in [*engines, *matchmakers, *scorers[1:]]
        ]
        for thread in starts:
            thread.start()
        for thread in starts:
            thread.join()
        for p in [*engines, *matchmakers, *scorers]:
            assert p.proc is not None and p.proc.poll() is None, f"{p.address} did not start"
        started = time.monotonic()
        games = asyncio.run(scenario())
        figures["play, both waves (s)"] = time.monotonic() - started

        def scored() -> bool:
            return all((s := reader.state(g)) is not None and s.over for g in games) and not client.llen(
                f"{prefix}scoring:outbox"
            )

        deadline = time.monotonic() + 60
        while not scored():
            assert time.monotonic() < deadline, "the games' results were not all scored and published"
            time.sleep(0.2)
    finally:
        for p in [*engines, *matchmakers, *scorers]:
            p.stop()

    all_rooms = FIRST_WAVE + SECOND_WAVE
    assert len(set(games)) == len(all_rooms)
    # Every table formed once.
    formed = Counter(
        mm.MatchmakingEvent.FromString(r.payload).table_formed.game_id
        for r in _records(kafka_bootstrap, topics["MATCHMAKING_TOPIC"])
        if r.event_type == "table_formed"
    )
    assert formed == Counter(games)
    # Every game played to its end once: gap-free seqs, one GameEnded, last.
    by_game: dict[str, list[EventRecord]] = defaultdict(list)
    game_records = _records(kafka_bootstrap, topics["ENGINE_TOPIC"])
    for record in game_records:
        by_game[record.game_id].append(record)
    assert set(by_game) == set(games)
    for game, records in by_game.items():
        assert [r.seq for r in records] == list(range(1, len(records) + 1)), game
        assert [r.event_type for r in records].count("game_ended") == 1
        assert records[-1].event_type == "game_ended"
        ended = ev.GameEvent.FromString(records[-1].payload)
        assert ended.game_ended.winners
    # Every result scored once: as one instance alone scores the same records ...
    alone = Handlers(client, f"{prefix}alone:")
    for partition in range(PARTITIONS):
        alone.on_game_records([r for r in game_records if r.position.partition == partition])
    players = [player.id for room in all_rooms for player in pairs[room]]
    assert _answers(reader, games, players) == _answers(
        ScoreReader(client, f"{prefix}alone:"), games, players
    )
    # ... and published once (a copy sent again after the kill is the same record).
    published: dict[tuple[str, int], bytes] = {}
    for record in _records(kafka_bootstrap, topics["SCORING_TOPIC"]):
        key = (record.game_id, record.seq)
        assert published.setdefault(key, record.payload) == record.payload, key
    results = Counter(
        event.game_id
        for event in map(sc.ScoringEvent.FromString, published.values())
        if event.HasField("match_scored")
    )
    assert results == Counter(games)
    print()
    for name, value in figures.items():
        print(f"{name}: {value:.1f}" if isinstance(value, float) else f"{name}: {value}")
