"""Seats are consented and ratings earned, on real Kafka and Redis with accounts from a real identity.

The rating farm of issue 25 (mallory creates a table seating alice, plays her timed-out seat to a win
and is rated for it) is refused at creation and moves no rating; two friends at a private table play a
casual game, which moves no rating; the same two in the rated queue play a game that moves both.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.matchmaking.v1 import matchmaking_pb2_grpc as mm_grpc
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy.scoring.v1 import scoring_pb2_grpc as sc_grpc
from rummy_client import GameClient, RpcFailure
from rummy_client.bots import BotPlayer
from rummy_engine.config import EngineConfig
from rummy_engine.engine import start_engine
from rummy_identity.testing import IdentityProcess, Player
from rummy_matchmaking.config import MatchmakingConfig
from rummy_matchmaking.pairing import PairingRules
from rummy_matchmaking.service import start_matchmaking
from rummy_scoring.config import ScoringConfig
from rummy_scoring.service import start_scoring

pytestmark = pytest.mark.integration
VARIANT = "rummy40"
SHORT: dict[str, dict[str, int | bool | str]] = {VARIANT: {"deals_per_match": 1}}


async def until(check: Any, timeout_s: float, what: str) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not (result := await check()):
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.2)
    return result


async def seated(stub: Any, player: Player, ticket: str) -> mm.WatchTicketResponse:
    last: mm.WatchTicketResponse | None = None
    async for reply in stub.WatchTicket(mm.WatchTicketRequest(ticket_id=ticket), metadata=player.auth()):
        last = reply
    assert last is not None and last.state == mm.TICKET_STATE_SEATED
    return last


async def play(engine: str, players: list[Player], tickets: list[mm.WatchTicketResponse]) -> None:
    """Each player plays their own seat (their ticket says which) with their own token, to the end."""
    seats = {s.player_id: s.seat for ticket in tickets for s in ticket.seats}
    ticket = tickets[0]
    clients = [GameClient(engine, p.token, retry_for_s=30) for p in players]
    try:
        for client in clients:  # the engine creates the game from TableFormed, a moment later
            await until(lambda c=client: _exists(c, ticket.game_id), 30, "the game")
        bots = [BotPlayer(c, ticket.game_id, seats[p.id]) for c, p in zip(clients, players, strict=True)]
        await asyncio.gather(*(bot.play() for bot in bots))
    finally:
        for client in clients:
            await client.close()


async def _exists(client: GameClient, game_id: str) -> bool:
    try:
        await client.view(game_id)
        return True
    except RpcFailure as failure:
        if failure.status != grpc.StatusCode.NOT_FOUND:
            raise
        return False


def test_the_rating_farm_is_refused_a_private_table_is_casual_and_the_rated_queue_is_rated(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str, identity: IdentityProcess
) -> None:
    alice, bob, mallory = (identity.player(f"{n}-{unique_prefix[-6:]}") for n in ("alice", "bob", "mallory"))
    topics = {
        "games": f"{unique_prefix}.rummy.game.events.v1",
        "tables": f"{unique_prefix}.rummy.matchmaking.events.v1",
        "scores": f"{unique_prefix}.rummy.scoring.events.v1",
    }
    prefix = f"{unique_prefix}:"

    async def scenario() -> None:
        engine = await start_engine(
            EngineConfig(
                address="127.0.0.1:0",
                topic=topics["games"],
                tables=topics["tables"],
                identity=identity.address,
                turn_timeout_ms=0,
                kafka=kafka_bootstrap,
                redis=redis_url,
                key_prefix=prefix,
            )
        )
        scoring = await start_scoring(
            ScoringConfig(
                address="127.0.0.1:0",
                game_topic=topics["games"],
                matchmaking_topic=topics["tables"],
                topic=topics["scores"],
                group=f"{unique_prefix}.scoring",
                kafka=kafka_bootstrap,
                redis=redis_url,
                key_prefix=prefix,
            )
        )
        matchmaking = await start_matchmaking(
            MatchmakingConfig(
                address="127.0.0.1:0",
                topic=topics["tables"],
                scoring_topic=topics["scores"],
                pairing_interval_ms=50,
                pairing={VARIANT: PairingRules(fill_after_s=0.5)},
                options=SHORT,
                identity=identity.address,
                kafka=kafka_bootstrap,
                redis=redis_url,
                key_prefix=prefix,
            )
        )
        try:
            async with (
                grpc.aio.insecure_channel(matchmaking.address) as mm_channel,
                grpc.aio.insecure_channel(scoring.address) as sc_channel,
            ):
                queue: Any = mm_grpc.MatchmakingServiceStub(mm_channel)
                scores: Any = sc_grpc.ScoringServiceStub(sc_channel)

                async def ratings(player: Player) -> int:
                    request = sc.GetRatingHistoryRequest(player_id=player.id, variant=VARIANT)
                    return len((await scores.GetRatingHistory(request)).changes)

                # The farm: mallory seats alice without asking. Refused, nothing written.
                farmer = GameClient(engine.address, mallory.token, retry_for_s=0)
                with pytest.raises(RpcFailure) as farm:
                    await farmer.create_game(VARIANT, [mallory.id, alice.id], options=SHORT[VARIANT])
                assert farm.value.code == "not_consented"
                await farmer.close()
                # A guest may not queue rated.
                guest = identity.guest()
                rated_guest = mm.EnqueueRequest(variant=VARIANT, min_players=2)
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await queue.Enqueue(rated_guest, metadata=guest.auth())
                assert (refused.value.details() or "").startswith("account_required")

                async def together(request: mm.EnqueueRequest) -> str:
                    tickets = [await queue.Enqueue(request, metadata=p.auth()) for p in (alice, bob)]
                    answers = await asyncio.gather(
                        *(seated(queue, p, t.ticket_id) for p, t in zip((alice, bob), tickets, strict=True))
                    )
                    assert answers[0].game_id == answers[1].game_id
                    await play(engine.address, [alice, bob], answers)
                    game_id = answers[0].game_id

                    async def scored() -> bool:
                        try:
                            result = await scores.GetMatchResult(sc.GetMatchResultRequest(game_id=game_id))
                            return bool(result.HasField("match"))
                        except grpc.aio.AioRpcError:
                            return False

                    await until(scored, 60, f"scoring's result of {game_id}")
                    return game_id

                private = mm.EnqueueRequest(variant=VARIANT, min_players=2, private_code=unique_prefix[-12:])
                await together(private)
                assert await ratings(alice) == 0 and await ratings(bob) == 0  # casual: scored, not rated
                game = await together(mm.EnqueueRequest(variant=VARIANT, min_players=2))
                await until(lambda: _both_rated(ratings, alice, bob), 60, f"the ratings of {game}")
                assert await ratings(mallory) == 0
                board = await scores.GetLeaderboard(sc.GetLeaderboardRequest(variant=VARIANT, period="all"))
                assert {e.player_id for e in board.entries} <= {alice.id, bob.id}
                assert all(e.name in (alice.name, bob.name) for e in board.entries)
        finally:
            await matchmaking.stop()
            await scoring.stop()
            await engine.stop()

    asyncio.run(scenario())


async def _both_rated(ratings: Any, *players: Player) -> bool:
    return all([await ratings(p) == 1 for p in players])
