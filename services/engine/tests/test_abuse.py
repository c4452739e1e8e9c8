"""API abuse at the edge (oversized fields, unparseable bytes), refused before anything is read, and
the fold's record of which seat sent each command id (so another seat's reuse can be refused)."""

from __future__ import annotations

import random
from typing import Any

import grpc
import pytest
from rummy.game.v1 import game_service_pb2 as gs
from rummy.game.v1 import game_service_pb2_grpc as gs_grpc
from rummy_client import GameClient
from rummy_contracts.facts import TableSeated
from rummy_contracts.projection import COMMANDS_KEPT, GameProjection
from rummy_engine import limits
from rummy_engine.engine import RunningEngine
from rummy_rules.commands import BuyDiscard
from rummy_rules.events import BuyGranted
from rummy_rules.game import decide, legal_actions, start
from rummy_rules.out_of_turn import OUT_OF_TURN
from rummy_rules.state import Phase
from rummy_service.errors import QUOTED_CHARS
from rummy_service.limits import text_fields

from .conftest import People
from .test_service import NO_TIMER, run_on

DRAW = gs.Action(draw_from_stock=gs.DrawFromStock())
HUGE = "x" * 1_000_000


def test_the_projection_records_the_seat_that_sent_each_command() -> None:
    """The seat to move sent every command but a buy, even one opening with another seat's event:
    the forehand's draw opens with the buyer's BuyGranted (contract D12)."""
    seed = bytes(range(16))
    projection = GameProjection()
    players = ("ann", "bob", "cy", "dee")
    state = projection.fold(None, "engine/create", 1, start("contract", 4, seed))
    state = projection.fold(state, "engine/create", 2, TableSeated(players, 0, (), "test"))
    rng = random.Random(7)
    sent: dict[str, int] = {}
    seq, granted_to_another = 2, False
    for step in range(400):
        game = state.game
        if game.phase is not Phase.DRAW and game.phase is not Phase.PLAY:
            break
        buys = [(s, a) for s in range(4) if s != game.turn for a in legal_actions(game, s)]
        buys = [(s, a) for s, a in buys if isinstance(a, BuyDiscard)]
        moves = [a for a in legal_actions(game, game.turn) if not isinstance(a, OUT_OF_TURN)]
        seat, command = buys[0] if buys and rng.random() < 0.7 else (game.turn, rng.choice(moves))
        command_id = f"c{step}"
        for event in decide(game, command, seed=seed):
            seq += 1
            state = projection.fold(state, command_id, seq, event)
            granted_to_another |= isinstance(event, BuyGranted) and event.seat != seat
        sent[command_id] = seat
    assert granted_to_another
    kept = {command_id: c.seat for command_id, c in state.commands.items() if command_id in sent}
    assert kept and kept == {command_id: sent[command_id] for command_id in kept}
    assert len(state.commands) <= COMMANDS_KEPT
    assert projection.loads(projection.dumps(state)) == state


def test_every_string_field_of_the_api_has_a_limit() -> None:
    service = gs.DESCRIPTOR.services_by_name["GameService"]
    for method in service.methods:
        assert text_fields(method.input_type) <= set(limits.FIELDS), method.name


async def _answer(stub: Any, method: str, request: Any, metadata: Any) -> grpc.aio.AioRpcError:
    """The refusal of a unary or server-streaming call."""
    streaming = gs.DESCRIPTOR.services_by_name["GameService"].methods_by_name[method].server_streaming
    call = getattr(stub, method)(request, metadata=metadata)
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await (call.read() if streaming else call)
    return error.value


def test_oversized_fields_are_refused_and_never_echoed(stores: dict[str, Any], people: People) -> None:
    async def scenario(engine: RunningEngine) -> None:
        ops = people.client(engine.address, people.ops)
        await ops.create_game("rummy40", people.ids, "big", turn_timeout_ms=NO_TIMER)
        metadata = people.ops.auth()
        service = gs.DESCRIPTOR.services_by_name["GameService"]
        async with grpc.aio.insecure_channel(engine.address) as channel:
            stub: Any = gs_grpc.GameServiceStub(channel)
            answers = {
                method.name: await _answer(
                    stub, method.name, getattr(gs, method.input_type.name)(game_id=HUGE), metadata
                )
                for method in service.methods
            }
            create = gs.CreateGameRequest(variant="rummy40", player_ids=people.ids)
            oversized = [gs.CreateGameRequest(variant=HUGE, player_ids=people.ids)]
            oversized.append(gs.CreateGameRequest(variant="rummy40", player_ids=[people.ids[0], HUGE]))
            oversized.append(
                gs.CreateGameRequest(variant="rummy40", player_ids=people.ids, player_names=[HUGE] * 3)
            )
            for name, value in ((HUGE, 1), ("deals_per_match", HUGE)):
                request = gs.CreateGameRequest()
                request.CopyFrom(create)
                if isinstance(value, int):
                    request.options[name].int_value = value
                else:
                    request.options[name].string_value = value
                oversized.append(request)
            for i, request in enumerate(oversized):
                answers[f"CreateGame {i}"] = await _answer(stub, "CreateGame", request, metadata)
            submit = gs.SubmitActionRequest(game_id="big", command_id=HUGE, action=DRAW)
            answers["SubmitAction command_id"] = await _answer(stub, "SubmitAction", submit, metadata)
        for what, error in answers.items():
            details = error.details() or ""
            assert error.code() is grpc.StatusCode.INVALID_ARGUMENT, (what, details)
            assert details.startswith("too_long: ") and "x" * QUOTED_CHARS not in details, what
        # At the limit is fine.
        at_limit = ["a" * limits.FIELDS["player_ids"], "bob"]
        service_token = GameClient(
            engine.address, people.identity.service_token("matchmaking"), retry_for_s=0
        )
        await service_token.create_game("rummy40", at_limit, "g" * limits.GAME_ID)
        for client in (ops, service_token):
            await client.close()

    run_on(stores, scenario)


def test_unparseable_request_bytes_are_invalid_argument(stores: dict[str, Any]) -> None:
    """Also for a streaming method (the servicer's async generators are wrapped, not replaced)."""

    async def scenario(engine: RunningEngine) -> None:
        async with grpc.aio.insecure_channel(engine.address) as channel:
            view: Any = channel.unary_unary("/rummy.game.v1.GameService/GetView")
            stream: Any = channel.unary_stream("/rummy.game.v1.GameService/StreamGame")
            for call in (view(b"\xff\xff"), stream(b"\xff\xff").read()):
                with pytest.raises(grpc.aio.AioRpcError) as error:
                    await call
                assert error.value.code() is grpc.StatusCode.INVALID_ARGUMENT
                assert (error.value.details() or "").startswith("malformed_request: ")

    run_on(stores, scenario)
