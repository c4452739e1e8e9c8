"""API abuse the app refuses: one player in two seats, another seat's command id, a re-created game
with other rules, a valueless option. Each gets a precise status and changes nothing."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest
from rummy.game.v1 import events_pb2
from rummy.game.v1 import game_service_pb2 as gs
from rummy.game.v1 import game_service_pb2_grpc as gs_grpc
from rummy_engine.config import EngineConfig
from rummy_engine.engine import RunningEngine

from .conftest import People
from .test_service import NO_TIMER, refused, run_on, started

DRAW = gs.Action(draw_from_stock=gs.DrawFromStock())


def test_one_player_cannot_take_two_seats(stores: dict[str, Any], people: People) -> None:
    async def scenario(engine: RunningEngine) -> None:
        ann = people.client(engine.address, people.ops)
        a, b, _ = people.ids
        twice = await refused(ann.create_game("kalooki", [a, a, b], "twice"))
        assert twice.status is grpc.StatusCode.INVALID_ARGUMENT and twice.code == "duplicate_player"
        assert engine.stores.log.last_seq("twice") == 0
        await ann.close()

    run_on(stores, scenario)


def test_a_command_id_answers_only_the_seat_that_used_it(stores: dict[str, Any], people: People) -> None:
    """Another seat's reuse of an id, or its own seat's with another action, is refused instead of
    answered with the first command's outcome, also after a restart (seats and request digests come
    from the log, here through a snapshot taken at seq 3)."""
    config = EngineConfig(address="127.0.0.1:0", snapshot_every=3, **stores)

    async def reuse(engine: RunningEngine, mover: int) -> None:
        seats = people.clients(engine.address)
        for other in (seat for seat in range(3) if seat != mover):
            reused = await refused(seats[other].submit("ids", other, DRAW, command_id="c-1"))
            assert reused.status is grpc.StatusCode.ALREADY_EXISTS and reused.code == "command_id_reused"
        retried = await seats[mover].submit("ids", mover, DRAW, command_id="c-1")
        assert retried.duplicate and (retried.first_seq, retried.last_seq) == (3, 3)
        other_action = gs.Action(take_discard=gs.TakeDiscard())  # its own id, sent with another action
        changed = await refused(seats[mover].submit("ids", mover, other_action, command_id="c-1"))
        assert changed.status is grpc.StatusCode.ALREADY_EXISTS and changed.code == "command_id_reused"
        assert engine.stores.log.last_seq("ids") == 3
        for client in seats:
            await client.close()

    async def scenario() -> None:
        engine = await started(config)
        try:
            seats = people.clients(engine.address)
            ops = people.client(engine.address, people.ops)
            created = await ops.create_game("rummy40", people.ids, "ids", turn_timeout_ms=NO_TIMER)
            await ops.close()
            mover = created.view.turn
            assert not (await seats[mover].submit("ids", mover, DRAW, command_id="c-1")).duplicate
            for client in seats:
                await client.close()
            await reuse(engine, mover)
        finally:
            await engine.stop()
        engine = await started(config)
        try:
            await reuse(engine, mover)
        finally:
            await engine.stop()

    asyncio.run(scenario())


def test_re_creating_a_game_answers_it_only_for_the_same_table(
    stores: dict[str, Any], people: People
) -> None:
    async def scenario(engine: RunningEngine) -> None:
        ann = people.client(engine.address, people.ops)
        table: dict[str, Any] = {
            "variant": "rummy40",
            "player_ids": people.ids,
            "game_id": "again",
            "options": {"deals_per_match": 1},
            "turn_timeout_ms": NO_TIMER,
        }
        created = await ann.create_game(**table)
        assert (await ann.create_game(**table)).view.seed_commitment == created.view.seed_commitment
        changes: list[dict[str, Any]] = [
            {"options": {"deals_per_match": 2}},
            {"options": {}},
            {"options": {"deals_per_match": 1, "layoff_on_others": True}},
            {"turn_timeout_ms": NO_TIMER + 1},
            {"variant": "kalooki", "options": {}},
            {"player_ids": list(reversed(people.ids))},
        ]
        for change in changes:
            clash = await refused(ann.create_game(**{**table, **change}))
            assert clash.status is grpc.StatusCode.ALREADY_EXISTS and clash.code == "game_exists", change
        assert engine.stores.log.last_seq("again") == 2
        await ann.close()

    run_on(stores, scenario)


def test_an_option_without_a_value_is_refused(stores: dict[str, Any], people: People) -> None:
    async def scenario(engine: RunningEngine) -> None:
        request = gs.CreateGameRequest(game_id="empty", variant="rummy40", player_ids=people.ids)
        request.options["deals_per_match"].CopyFrom(events_pb2.OptionValue())
        async with grpc.aio.insecure_channel(engine.address) as channel:
            stub: Any = gs_grpc.GameServiceStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as error:
                await stub.CreateGame(request, metadata=people.ops.auth())
        assert error.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert (error.value.details() or "").startswith("bad_option: ")
        assert engine.stores.log.last_seq("empty") == 0

    run_on(stores, scenario)
