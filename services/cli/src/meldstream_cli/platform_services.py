"""Matchmaking and scoring beside the engine in `meldstream run` (the hook `run.py` calls).

Matchmaking always runs: on the embedded store it publishes tables to a sqlite file next to the
engine's, on Kafka to `rummy.matchmaking.events.v1`; the engine creates games from it (`ENGINE_TABLES`).
Scoring needs Redis, so it runs only with `--kafka`/`--redis`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import grpc
from rummy.game.v1 import game_service_pb2 as gs
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.matchmaking.v1 import matchmaking_pb2_grpc as mm_grpc
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy.scoring.v1 import scoring_pb2_grpc as sc_grpc
from rummy_client import GameClient
from rummy_client.bots import BotPlayer
from rummy_client.client import RpcFailure
from rummy_engine.config import EngineConfig
from rummy_matchmaking import config as matchmaking_config
from rummy_matchmaking.service import RunningMatchmaking, start_matchmaking
from rummy_scoring import config as scoring_config
from rummy_scoring.service import RunningScoring, start_scoring
from rummy_service.auth import TokenIssuer


def matchmaking_dir(config: EngineConfig) -> Path:
    return Path(config.data_dir).parent / "matchmaking"


def with_tables(config: EngineConfig) -> EngineConfig:
    """The engine configuration, following matchmaking's tables unless ENGINE_TABLES names them."""
    if config.tables:
        return config
    if config.embedded:
        return replace(config, tables=str(matchmaking_dir(config) / "tables.sqlite"))
    return replace(config, tables=matchmaking_config.MATCHMAKING_TOPIC)


@dataclass(slots=True)
class PlatformServices:
    matchmaking: RunningMatchmaking
    scoring: RunningScoring | None = None
    lines: list[str] = field(default_factory=list)

    async def stop(self) -> None:
        await self.matchmaking.stop()
        if self.scoring is not None:
            await self.scoring.stop()


async def start_services(config: EngineConfig) -> PlatformServices:
    """Start matchmaking (and scoring on Kafka + Redis) for an engine configured by `with_tables`."""
    mm = replace(
        matchmaking_config.load(),
        kafka=config.kafka,
        topic=config.tables if not config.embedded else matchmaking_config.MATCHMAKING_TOPIC,
        data_dir=str(matchmaking_dir(config)),
        token_secret=config.token_secret,
    )
    services = PlatformServices(await start_matchmaking(mm))
    services.lines.append(f"meldstream matchmaking listening on {services.matchmaking.address}")
    if not config.embedded:
        sc = replace(
            scoring_config.ScoringConfig(),
            kafka=config.kafka,
            redis=config.redis,
            game_topic=config.topic,
            matchmaking_topic=config.tables,
            key_prefix=config.key_prefix,
        )
        services.scoring = await start_scoring(sc)
        services.lines.append(f"meldstream scoring listening on {services.scoring.address}")
    else:
        services.lines.append("  scoring: needs --kafka and --redis (Redis holds its results)")
    return services


QUEUE_PLAYERS = ("dana", "eli", "fay")


async def _seat(stub: Any, tokens: TokenIssuer, player: str) -> mm.WatchTicketResponse:
    metadata = (("authorization", f"Bearer {tokens.issue(player)}"),)
    request = mm.EnqueueRequest(variant="kalooki", min_players=3, max_players=3)
    ticket = await stub.Enqueue(request, metadata=metadata)
    last: mm.WatchTicketResponse | None = None
    async for reply in stub.WatchTicket(mm.WatchTicketRequest(ticket_id=ticket.ticket_id), metadata=metadata):
        last = reply
    assert last is not None
    return last


async def _play_seat(engine_address: str, player: str, seated: mm.WatchTicketResponse) -> gs.PlayerView:
    seat = next(s for s in seated.seats if s.player_id == player)
    async with GameClient(engine_address, seat.token) as client:
        for _ in range(200):  # the engine creates the game from TableFormed, asynchronously
            try:
                await client.view(seated.game_id, seat.seat)
                break
            except RpcFailure as failure:
                if failure.status != grpc.StatusCode.NOT_FOUND:
                    raise
                await asyncio.sleep(0.1)
        return await BotPlayer(client, seated.game_id, seat.seat).play()


async def queue_demo(services: PlatformServices, engine_address: str, tokens: TokenIssuer) -> None:
    """Bots that go the whole way, again and again: queue, get seated, play, and (with scoring) get rated."""
    channels = [grpc.aio.insecure_channel(services.matchmaking.address)]
    stub: Any = mm_grpc.MatchmakingServiceStub(channels[0])
    scores: Any = None
    if services.scoring is not None:
        channels.append(grpc.aio.insecure_channel(services.scoring.address))
        scores = sc_grpc.ScoringServiceStub(channels[1])
    try:
        while True:
            seated = await asyncio.gather(*(_seat(stub, tokens, p) for p in QUEUE_PLAYERS))
            game_id = seated[0].game_id
            print(
                f"queue demo: {', '.join(QUEUE_PLAYERS)} seated by matchmaking in game {game_id}", flush=True
            )
            views = await asyncio.gather(
                *(_play_seat(engine_address, p, s) for p, s in zip(QUEUE_PLAYERS, seated, strict=True))
            )
            print(f"queue demo: game {game_id} over, totals {list(views[0].totals)}", flush=True)
            if scores is not None:
                await asyncio.sleep(2.0)  # scoring follows the game topic
                for player in QUEUE_PLAYERS:
                    history = await scores.GetRatingHistory(
                        sc.GetRatingHistoryRequest(player_id=player, variant="kalooki")
                    )
                    print(
                        f"queue demo: {player} rated {history.ordinal:.2f} after {len(history.changes)} games"
                    )
    finally:
        for channel in channels:
            await channel.close()
