"""Event log and snapshot stores for meldstream games: Kafka + Redis, or an embedded sqlite file.

The stores keep opaque payloads (serialized ``rummy.game.v1.GameEvent`` envelopes); they never import the
rules engine. See the README's architecture section for the single-writer rule.
"""

from rummy_store.errors import ConcurrencyError, NotWriterError, StoreError
from rummy_store.event_log import EventLog, Subscription
from rummy_store.records import AppendResult, EventRecord, LogPosition, NewEvent
from rummy_store.snapshots import Snapshot, SnapshotStore

__all__ = [
    "AppendResult",
    "ConcurrencyError",
    "EventLog",
    "EventRecord",
    "LogPosition",
    "NewEvent",
    "NotWriterError",
    "Snapshot",
    "SnapshotStore",
    "StoreError",
    "Subscription",
]
