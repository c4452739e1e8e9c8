"""Creating games from matchmaking's `TableFormed` events (topic `rummy.matchmaking.events.v1`).

The engines share one consumer group, so each TableFormed is handled by one engine; a redelivered one
makes no second game because `GameApp.create` is idempotent for the same game id and table (its
first append expects seq 0; a second answers the same game when its TableSeated matches). A table
the rules refuse (an unknown variant, a table size out of range) is logged and skipped: retrying
cannot make it valid. The engine that gets a TableFormed need not own the game's partition: then it
sends the CreateGame to the owner the refusal names, over gRPC with the engine's own access token
(`service:engine`, from its credential at identity), which the owner records as matchmaking's table.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Final

import grpc
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy_client import GameClient, RpcFailure
from rummy_client.identity import IdentityClient
from rummy_contracts import wire
from rummy_rules.events import OptionValue
from rummy_service.consumer import ConsumerLoop
from rummy_service.errors import AlreadyExists, InvalidArgument, Unavailable
from rummy_service.tls import PLAINTEXT, Tls
from rummy_store import EventLog, EventRecord

from rummy_engine.access import FROM_MATCHMAKING
from rummy_engine.app import OWNER_TRAILER, GameApp
from rummy_engine.config import EngineConfig

log = logging.getLogger("rummy_engine")
GROUP: Final = "rummy-engine.tables"
CREATE_TIMEOUT_S: Final = 60
# A forward gives up on an unanswering owner soon: the record is then retried through the app, which
# names the partition's new owner once the directory has it (an owner SIGKILLed held every table behind
# it for the SDK's whole 60 s retry window).
FORWARD_RETRY_S: Final = 2.0


class TableConsumer:
    """Feeds TableFormed records from a consumer thread to the app on its event loop."""

    def __init__(
        self,
        app: GameApp,
        tables: EventLog,
        loop: asyncio.AbstractEventLoop,
        token: Callable[[], str] | None,
        group: str = GROUP,
        *,
        tls: Tls = PLAINTEXT,
    ) -> None:
        self._app = app
        self._loop = loop
        self._token = token  # None: no credential, so a table of another engine's partition waits
        self._tls = tls
        self._tables = tables
        self.created = 0  # TableFormed answered with the game (a redelivery answers the same game)
        self.handled = 0
        self.refused: list[str] = []
        self._consumer = ConsumerLoop(tables, group, self.on_record)

    @staticmethod
    def open(app: GameApp, config: EngineConfig, loop: asyncio.AbstractEventLoop) -> TableConsumer:
        """Follow `config.tables`: a Kafka topic, or (embedded) matchmaking's sqlite file."""
        tables = config.store.open().log(
            config.tables, Path(config.tables).absolute(), config.partitions, replication=config.replication
        )
        token = None
        if config.service_credential:
            identity = IdentityClient(
                config.identity,
                credentials=config.tls.channel_credentials(),
                options=config.tls.channel_options(),
            )
            token = identity.api_token(config.service_credential)
        consumer = TableConsumer(app, tables, loop, token, tls=config.tls)
        consumer._consumer.start()
        return consumer

    def stop(self) -> None:
        self._consumer.stop()
        self._tables.close()

    def on_record(self, record: EventRecord) -> None:
        if record.event_type != "table_formed":
            return
        self._create(record)
        self.handled += 1

    def _create(self, record: EventRecord) -> None:
        table = mm.MatchmakingEvent.FromString(record.payload).table_formed
        options = {name: wire.option_from_pb(value) for name, value in table.options.items()}
        create = self._app.create(
            table.game_id,
            table.variant,
            list(table.player_ids),
            options,
            table.turn_timeout_ms,
            requested_by=FROM_MATCHMAKING,
            names=list(table.player_names),
            bots=list(table.bots),
            rated=table.rated,
            time_bank_ms=_bank(table),
        )
        try:
            asyncio.run_coroutine_threadsafe(create, self._loop).result(CREATE_TIMEOUT_S)
            self.created += 1
        except (InvalidArgument, AlreadyExists) as exc:
            log.error("TableFormed %s refused: %s", table.game_id, exc)
            self.refused.append(table.game_id)
        except Unavailable as exc:
            owner = dict(exc.trailers).get(OWNER_TRAILER)
            if owner is None:
                raise  # no owner known yet: the consumer retries the record
            if self._token is None:
                log.error(
                    "TableFormed %s belongs to the engine at %s, and this engine has no "
                    "MELDSTREAM_SERVICE_CREDENTIAL to forward it with: retried",
                    *(table.game_id, owner),
                )
                raise
            self._forward(owner, table, options)

    def _forward(self, owner: str, table: mm.TableFormed, options: dict[str, OptionValue]) -> None:
        """CreateGame at the engine owning the game's partition (the same idempotent create there)."""
        token = self._token
        assert token is not None

        async def create() -> None:
            tls = self._tls
            async with GameClient(
                owner,
                token,
                retry_for_s=FORWARD_RETRY_S,
                credentials=tls.channel_credentials(),
                options=tls.channel_options(),
            ) as client:
                await client.create_game(
                    table.variant,
                    list(table.player_ids),
                    table.game_id,
                    {name: value for name, value in options.items() if value is not None},
                    table.turn_timeout_ms,
                    player_names=list(table.player_names),
                    bots=list(table.bots),
                    rated=table.rated,
                    time_bank_ms=_bank(table),
                )

        try:
            asyncio.run_coroutine_threadsafe(create(), self._loop).result(CREATE_TIMEOUT_S)
            self.created += 1
        except RpcFailure as failure:
            if failure.status not in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.ALREADY_EXISTS):
                raise  # the owner is away or moving: the consumer retries the record
            log.error("TableFormed %s refused by %s: %s", table.game_id, owner, failure)
            self.refused.append(table.game_id)


def _bank(table: mm.TableFormed) -> int | None:
    """The table's time bank (a private table's host chose it), or None: the engine's default."""
    return table.time_bank_ms if table.HasField("time_bank_ms") else None
