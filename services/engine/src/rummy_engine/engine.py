"""Starting and stopping one engine: stores, app, gRPC server with health and reflection."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from rummy.game.v1 import game_service_pb2, game_service_pb2_grpc
from rummy_service.public_keys import keys_ready, verifier
from rummy_service.rate_limits import Limiter, RateLimiting
from rummy_service.server import ServiceHost
from rummy_store.ownership import OwnerDirectory, PartitionOwnership

from rummy_engine.app import GameApp
from rummy_engine.config import EngineConfig
from rummy_engine.refusals import RefusalStream
from rummy_engine.seeds import DEV_SEED_KEY
from rummy_engine.server import GameServicer
from rummy_engine.stores import Stores, open_stores
from rummy_engine.tables import TableConsumer

_T = TypeVar("_T")

log = logging.getLogger("rummy_engine")
SERVICE_NAME = game_service_pb2.DESCRIPTOR.services_by_name["GameService"].full_name
MOVES = ("SubmitAction", "GetView", "ListLegalActions")
"""Calls counted in this engine's memory only (`rate_limits`): a round trip to Redis would cost more."""


@dataclass(slots=True)
class RunningEngine:
    """An engine serving on `address` (the port resolved when the configuration asked for port 0)."""

    config: EngineConfig
    stores: Stores
    app: GameApp
    host: ServiceHost
    tables: TableConsumer | None = None  # games from matchmaking's TableFormed (tables.py)
    ownership: PartitionOwnership | None = None  # on Kafka: this engine's share of the partitions
    refused: RefusalStream | None = None  # refused actions on record (refusals.py)

    @property
    def address(self) -> str:
        return self.host.address

    async def stop(self) -> None:
        """Hand the partitions over, then stop serving: while the other engines claim them, calls and
        streams here are answered with the new owner's address (SIGTERM costs clients no failed call)."""
        if self.tables is not None:
            await asyncio.to_thread(self.tables.stop)
        if self.ownership is not None:  # leave the group: the other engines take the partitions now
            await asyncio.to_thread(self.ownership.stop)
            await self.app.handed_over()
        await self.host.stop()
        await self.app.close()
        self.stores.close()
        if self.refused is not None:
            self.refused.close()


async def start_engine(config: EngineConfig) -> RunningEngine:
    """Open the stores and serve; health turns SERVING once both stores answer.

    A store another event format wrote is refused first (`event_format.OtherEventFormat`), before
    anything listens.
    """
    stores = open_stores(config)
    try:
        await asyncio.to_thread(stores.check_format)
    except BaseException:
        stores.close()
        raise
    if config.seed_key == DEV_SEED_KEY:
        log.warning(
            "ENGINE_SEED_KEY is not set: game seeds derive from the public development key, so anyone "
            "can predict every deal and reshuffle. Set ENGINE_SEED_KEY to a long random secret "
            "(and keep it while games are open) for anything but local development."
        )
    app = GameApp(stores, config)
    ownership = _ownership(config, stores, app)

    tokens = verifier(config.identity, config.tls)

    async def ready() -> bool:
        """SERVING once this engine's first share of the partitions is claimed, the stores answer and
        identity's keys are here (without them no call can be authenticated)."""
        owned = ownership is None or ownership.settled.is_set()
        return owned and await app.ready() and await keys_ready(tokens)

    limits = RateLimiting(
        Limiter(config.redis, config.key_prefix),
        config.limits,
        tokens,
        services=[SERVICE_NAME],
        local_only=MOVES,
    )
    await keys_ready(tokens)  # fetched before the first call (a first health check may not ask yet)
    host = ServiceHost(config.address, [SERVICE_NAME], ready, tls=config.tls, limits=limits)
    refused = RefusalStream(config)
    game_service_pb2_grpc.add_GameServiceServicer_to_server(GameServicer(app, tokens, refused), host.server)
    await host.start()
    if ownership is None:
        app.resume_open_games()
    else:
        advertised = config.advertised or host.address
        ownership.start(advertised)
        app.owner_of = ownership.owner_of
        app.claiming = ownership.claiming
        app.generation = ownership.generation
        assert stores.redis is not None
        app.follow_handovers(OwnerDirectory(stores.redis, config.key_prefix, config.topic).read, advertised)
    tables = TableConsumer.open(app, config, asyncio.get_running_loop()) if config.tables else None
    return RunningEngine(config, stores, app, host, tables, ownership, refused)


def _ownership(config: EngineConfig, stores: Stores, app: GameApp) -> PartitionOwnership | None:
    """On Kafka, membership of the engines' group; its callbacks reach the app on the event loop."""
    if stores.kafka is None:
        return None
    loop = asyncio.get_running_loop()
    assert stores.redis is not None
    return PartitionOwnership(
        config.kafka,
        stores.kafka,
        config.group_id,
        OwnerDirectory(stores.redis, config.key_prefix, config.topic),
        assigned=lambda parts: _on_loop(loop, app.partitions_assigned, parts),
        revoked=lambda parts: _on_loop(loop, app.partitions_revoked, parts),
        joined=lambda generation: _on_loop(loop, app.joined, generation),
    )


def _on_loop(loop: asyncio.AbstractEventLoop, fn: Callable[[_T], None], arg: _T) -> None:
    loop.call_soon_threadsafe(fn, arg)
