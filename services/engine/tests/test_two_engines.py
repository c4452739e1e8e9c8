"""Two engines in one group share the game topic's partitions; each writes only the games of its own.

Both engines run in this process but share nothing except Kafka and Redis, as two processes would.
The group splits the partitions between them; a call about a game of the other's partition answers
UNAVAILABLE `not_owner`, names the owner in its trailer and changes nothing, and the SDK follows it,
so a client may call either engine. When the owner stops, its partitions move to the other, which
takes the game over from the log (a retried command id is recognised, not appended again), so the log
stays one gap-free history.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import grpc
import pytest
from rummy.game.v1 import game_service_pb2 as gs
from rummy.game.v1 import game_service_pb2_grpc as gs_grpc
from rummy_client import GameClient, RpcFailure
from rummy_engine.config import EngineConfig
from rummy_engine.engine import RunningEngine, start_engine
from rummy_identity.testing import Player
from rummy_matchmaking.app import table_event
from rummy_store import NewEvent
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.publisher import KafkaPublisher

from .conftest import People

DRAW = gs.Action(draw_from_stock=gs.DrawFromStock())
PARTITIONS = 3  # a small topic: the test waits for the engines to own every partition
ALL = frozenset(range(PARTITIONS))


async def until(condition: Callable[[], bool], what: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)


@pytest.mark.integration
def test_engines_split_the_partitions_and_a_stopped_ones_games_move_on(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str, people: People
) -> None:
    ann, bob = people.players[:2]
    players = [ann.id, bob.id]
    by_id = {ann.id: ann, bob.id: bob}
    topic = f"{unique_prefix}.rummy.game.events.v1"

    async def scenario() -> None:
        config = EngineConfig(
            address="127.0.0.1:0",
            kafka=kafka_bootstrap,
            redis=redis_url,
            topic=topic,
            key_prefix=f"{unique_prefix}:",
            partitions=PARTITIONS,
            turn_timeout_ms=0,
            identity=people.identity.address,
        )
        engines: list[RunningEngine] = [await start_engine(config)]
        clients: list[GameClient] = []

        def client(engine: RunningEngine, player: Player) -> GameClient:
            clients.append(people.client(engine.address, player))
            return clients[-1]

        try:
            await until(lambda: engines[0].app.owned == ALL, "the first engine to own every partition")
            engines.append(await start_engine(config))
            first, second = engines

            def split() -> bool:
                a, b = first.app.owned, second.app.owned
                return bool(a) and bool(b) and not a & b and a | b == ALL

            await until(split, "the group to split the partitions")
            partition = first.stores.log.partition_for("shared")
            owner, other = (first, second) if partition in first.app.owned else (second, first)

            await until(lambda: other.app.owner_of(partition) == owner.address, "the owner to be published")
            created = await client(other, people.ops).create_game("rummy40", players, "shared")  # any engine
            seat = created.view.turn
            mover = by_id[players[seat]]
            async with grpc.aio.insecure_channel(
                other.address
            ) as channel:  # not its partition: it says whose
                request = gs.SubmitActionRequest(
                    game_id="shared", seat=seat, command_id="draw-1", action=DRAW
                )
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await gs_grpc.GameServiceStub(channel).SubmitAction(request, metadata=mover.auth())
            assert refused.value.code() is grpc.StatusCode.UNAVAILABLE
            assert (refused.value.details() or "").startswith("not_owner")
            assert ("meldstream-owner", owner.address) in tuple(refused.value.trailing_metadata() or ())
            follower = client(other, mover)
            drawn = await follower.submit("shared", seat, DRAW, "draw-1", include_view=True)
            assert (drawn.first_seq, drawn.duplicate) == (3, False)  # the SDK followed to the owner

            await owner.stop()  # leaves the group: the other engine takes its partitions over
            engines.remove(owner)
            await until(lambda: other.app.owned == ALL, "the other engine to own every partition")
            with pytest.raises(RpcFailure) as away:  # it still sends the game to the stopped owner
                await follower.view("shared", seat)
            assert away.value.status is grpc.StatusCode.UNAVAILABLE
            moved = follower  # given up on, that route is forgotten: the next call asks the target again
            again = await moved.submit("shared", seat, DRAW, "draw-1")  # a retry, on the new owner
            assert again.duplicate and again.first_seq == 3
            discard = gs.Action(discard=gs.Discard(card=drawn.view.hand[0]))
            discarded = await moved.submit("shared", seat, discard, "discard-1")
            assert (discarded.first_seq, discarded.duplicate) == (4, False)

            log = KafkaEventLog(kafka_bootstrap, topic, config.partitions)
            try:
                records = list(log.read_stream("shared"))
            finally:
                log.close()
            assert [r.seq for r in records] == [1, 2, 3, 4]
            assert [r.command_id for r in records][2:] == ["draw-1", "discard-1"]
        finally:
            for c in clients:
                await c.close()
            for engine in engines:
                await engine.stop()

    asyncio.run(scenario())


async def _created(client: GameClient, game_id: str) -> gs.PlayerView:
    """The game's view once its table has been made into a game (NOT_FOUND until then)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return await client.view(game_id)
        except RpcFailure as failure:
            if failure.code != "no_such_game" or time.monotonic() > deadline:
                raise
        await asyncio.sleep(0.2)


@pytest.mark.integration
def test_a_table_formed_reaches_the_engine_owning_its_game(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str, people: People
) -> None:
    """Matchmaking's tables are split between the engines by their own topic's partitions, not by the
    games': an engine handed a table of another's partition sends the CreateGame to the owner."""
    tables = f"{unique_prefix}.rummy.matchmaking.events.v1"

    async def scenario() -> None:
        config = EngineConfig(
            address="127.0.0.1:0",
            kafka=kafka_bootstrap,
            redis=redis_url,
            topic=f"{unique_prefix}.rummy.game.events.v1",
            key_prefix=f"{unique_prefix}:",
            partitions=PARTITIONS,
            turn_timeout_ms=0,
            tables=tables,
            identity=people.identity.address,
            service_credential=people.identity.credentials["engine"],  # forwards tables to their owner
        )
        engines = [await start_engine(config), await start_engine(config)]
        publisher = KafkaPublisher(kafka_bootstrap, tables, config.partitions)
        client = people.client(engines[0].address, people.ops, retry_for_s=60)
        try:

            def published() -> bool:
                return all(e.app.owner_of(p) or p in e.app.owned for e in engines for p in ALL)

            await until(lambda: engines[0].app.owned | engines[1].app.owned == ALL, "every partition owned")
            await until(published, "the owners to be published")
            games = [f"table-{n}" for n in range(9)]
            assert {engines[0].stores.log.partition_for(g) for g in games} == ALL
            for n, game_id in enumerate(games):
                event = table_event(game_id, "kalooki", people.ids, {})
                payload = NewEvent("table_formed", event.SerializeToString())
                await asyncio.to_thread(publisher.publish, game_id, f"c{n}", 1, [payload])
            for game_id in games:  # each game exists once, at its owner, whoever got the table
                assert (await _created(client, game_id)).seq == 2, game_id
            # each table answered at least once (a redelivery after a rebalance answers the same game)
            assert sum(e.tables.created for e in engines if e.tables is not None) >= len(games)
        finally:
            await client.close()
            publisher.close()
            for engine in engines:
                await engine.stop()

    asyncio.run(scenario())
