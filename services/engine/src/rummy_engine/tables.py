"""Creating games from matchmaking's `TableFormed` events (topic `rummy.matchmaking.events.v1`).

The engines share one consumer group, so each TableFormed is handled by one engine; a redelivered one
makes no second game because `GameApp.create` is idempotent for the same game id and table (its
first append expects seq 0; a second answers the same game when its TableSeated matches). A table
the rules refuse (an unknown variant, a table size out of range) is logged and skipped: retrying
cannot make it valid.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Final

from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy_client import wire
from rummy_service.consumer import ConsumerLoop
from rummy_service.errors import AlreadyExists, InvalidArgument
from rummy_store import EventLog, EventRecord
from rummy_store.embedded_log import EmbeddedEventLog
from rummy_store.kafka_log import KafkaEventLog

from rummy_engine.app import GameApp
from rummy_engine.config import EngineConfig

log = logging.getLogger("rummy_engine")
GROUP: Final = "rummy-engine.tables"
CREATE_TIMEOUT_S: Final = 60
REQUESTED_BY: Final = "matchmaking"  # TableSeated.requested_by of the games made from TableFormed


class TableConsumer:
    """Feeds TableFormed records from a consumer thread to the app on its event loop."""

    def __init__(
        self, app: GameApp, tables: EventLog, loop: asyncio.AbstractEventLoop, group: str = GROUP
    ) -> None:
        self._app = app
        self._loop = loop
        self._tables = tables
        self.created = 0  # TableFormed answered with the game (a redelivery answers the same game)
        self.handled = 0
        self.refused: list[str] = []
        self._consumer = ConsumerLoop(tables, group, self.on_record)

    @staticmethod
    def open(app: GameApp, config: EngineConfig, loop: asyncio.AbstractEventLoop) -> TableConsumer:
        """Follow `config.tables`: a Kafka topic, or (embedded) matchmaking's sqlite file."""
        tables: EventLog
        if config.embedded:
            Path(config.tables).parent.mkdir(parents=True, exist_ok=True)  # matchmaking may start later
            tables = EmbeddedEventLog(config.tables, config.partitions)
        else:
            tables = KafkaEventLog(config.kafka, config.tables, config.partitions)
        consumer = TableConsumer(app, tables, loop)
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
            requested_by=REQUESTED_BY,
        )
        try:
            asyncio.run_coroutine_threadsafe(create, self._loop).result(CREATE_TIMEOUT_S)
            self.created += 1
        except (InvalidArgument, AlreadyExists) as exc:
            log.error("TableFormed %s refused: %s", table.game_id, exc)
            self.refused.append(table.game_id)
