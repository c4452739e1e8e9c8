"""Split brain, with real processes: an engine paused past its session, a second takes its partitions
and plays on, the first resumes and tries to write. Nothing it writes may count: the broker fences its
transactional producer, so the log holds one gap-free history with each command once. Nor may it
answer from its stale copy (issue 24): until it has rejoined the group it refuses with `not_owner`.

The scenario the outside fault test ran against the Redis lease (it got the same command at the same
seq twice, 4 runs of 4): the client's command reaches the paused engine, times out, fails over to
the new owner with the same command id, and the old engine then acts on its stale copy of the game.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import grpc
import pytest
from rummy.game.v1 import game_service_pb2 as gs
from rummy.game.v1 import game_service_pb2_grpc
from rummy_client import GameClient, RpcFailure
from rummy_identity.testing import IdentityProcess, Player
from rummy_infra.local import free_port
from rummy_infra.serving import ServiceProcess
from rummy_store.kafka_clients import BACKENDS
from rummy_store.kafka_log import KafkaEventLog

DRAW = gs.Action(draw_from_stock=gs.DrawFromStock())


def _engine(env: dict[str, str], log: Path) -> ServiceProcess:
    address = f"127.0.0.1:{free_port()}"
    return ServiceProcess("rummy_engine", {**env, "ENGINE_ADDRESS": address}, address, log)


UNAVAILABLE = grpc.StatusCode.UNAVAILABLE


async def _get_view(address: str, player: Player, seat: int) -> gs.GetViewResponse | grpc.aio.AioRpcError:
    """GetView of the game "split" at one engine, with no retry: the answer or the refusal."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub = game_service_pb2_grpc.GameServiceStub(channel)
        try:
            request = gs.GetViewRequest(game_id="split", seat=seat)
            response: gs.GetViewResponse = await stub.GetView(
                request, metadata=await asyncio.to_thread(player.auth), timeout=5
            )
            return response
        except grpc.aio.AioRpcError as exc:
            return exc


async def _rejoined(old: str, new: str, player: Player, seat: int) -> str | int:
    """What the resumed engine answers once it has rejoined (at most 30 s): the seq of the game, if it
    owns it again, or "owner named" when it refuses with the other engine in the owner trailer."""
    refused = "no answer"
    for _ in range(300):
        answer = await _get_view(old, player, seat)
        if isinstance(answer, gs.GetViewResponse):
            return answer.view.seq
        trailers = dict(answer.trailing_metadata() or ())
        if trailers.get("meldstream-owner") == new:
            return "owner named"
        refused = f"{answer.code().name} {answer.details()}"
        await asyncio.sleep(0.1)
    return f"still refusing: {refused}"


@pytest.mark.integration
@pytest.mark.parametrize("kafka_client", BACKENDS)  # the same fault on each Kafka backend
def test_a_paused_engine_that_resumes_writes_nothing(
    kafka_bootstrap: str,
    redis_url: str,
    unique_prefix: str,
    tmp_path: Path,
    identity: IdentityProcess,
    *,
    kafka_client: str,
) -> None:
    ann, bob, ops = identity.player("ann"), identity.player("bob"), identity.operator()
    players = [ann, bob]
    topic = f"{unique_prefix}.rummy.game.events.v1"
    env = {
        **os.environ,
        "KAFKA_BOOTSTRAP": kafka_bootstrap,
        "KAFKA_CLIENT": kafka_client,
        "REDIS_URL": redis_url,
        "ENGINE_TOPIC": topic,
        "ENGINE_KEY_PREFIX": f"{unique_prefix}:",
        "ENGINE_TURN_TIMEOUT_MS": "0",
        **identity.service_env(),
    }
    old, new = _engine(env, tmp_path / "old.log"), _engine(env, tmp_path / "new.log")
    accepted: list[int] = []  # the first seq of the next seat's draw, if the resumed engine took it

    async def scenario() -> None:
        def client(engine: ServiceProcess, player: Player, retry_for_s: float) -> GameClient:
            return GameClient(engine.address, player.token, retry_for_s=retry_for_s, timeout_s=2)

        created = await client(old, ops, 30).create_game("rummy40", [p.id for p in players], "split")
        seat = created.view.turn
        mover = players[seat]
        drawn = await client(old, mover, 30).submit("split", seat, DRAW, "draw-1", include_view=True)
        discard = gs.Action(discard=gs.Discard(card=drawn.view.hand[0]))

        old.signal(signal.SIGSTOP)  # paused: no heartbeats, no answers
        with pytest.raises(RpcFailure):  # the client's command reaches it and times out
            await client(old, mover, 0).submit("split", seat, discard, "discard-1")
        await asyncio.to_thread(new.start, 90)  # SERVING once the group gave it the partitions
        failover = await client(new, mover, 30).submit("split", seat, discard, "discard-1")
        assert (failover.first_seq, failover.duplicate) == (4, False)

        old.signal(signal.SIGCONT)  # it resumes with its stale copy of the game, and tries to write
        # Its copy still shows the mover's turn. Until it has rejoined it must refuse (not_owner);
        # once it has (the group may give it the game back), it answers from the log: fresh.
        stale_view = await _get_view(old.address, mover, seat)
        if isinstance(stale_view, grpc.aio.AioRpcError):
            assert (stale_view.code(), (stale_view.details() or "").split(":")[0]) == (
                UNAVAILABLE,
                "not_owner",
            )
        else:
            assert stale_view.view.seq == 4
        # Legal now (the next seat's draw), illegal in its copy: not_owner, never FAILED_PRECONDITION.
        try:
            drawn_next = await client(old, players[1 - seat], 0).submit("split", 1 - seat, DRAW, "draw-next")
            accepted.append(drawn_next.first_seq)
        except RpcFailure as refused:
            assert (refused.status, refused.code) == (UNAVAILABLE, "not_owner"), refused
        # It rejoins the group: then it owns the game again and answers from the log, or names the
        # engine that owns it; never its old copy.
        answer = await _rejoined(old.address, new.address, mover, seat)
        assert answer == "owner named" or answer == 4 + len(accepted), answer
        await asyncio.sleep(1)  # let anything the resumed engine had queued reach the broker

    old.start()
    try:
        asyncio.run(scenario())
    finally:
        new.stop()
        old.stop()
    log = KafkaEventLog(kafka_bootstrap, topic, 3)
    try:
        records = list(log.read_stream("split"))
    finally:
        log.close()
    assert accepted in ([], [5])  # taken only as the game's owner again, after discard-1
    assert [r.seq for r in records] == list(range(1, 5 + len(accepted)))
    assert [r.command_id for r in records][2:] == ["draw-1", "discard-1", "draw-next"][: 2 + len(accepted)]
