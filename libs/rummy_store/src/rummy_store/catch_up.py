"""Rebuilding state from the log: one game (snapshot + tail) or every game of a partition.

The fold is supplied by the caller as a ``Projection`` (the engine passes the rules engine's ``evolve``
over decoded envelopes; the store's own tests pass a plain fold over payload bytes), so the store never
imports the rules engine.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from rummy_store.errors import StoreError
from rummy_store.event_log import EventLog
from rummy_store.records import EventRecord
from rummy_store.snapshots import Snapshot, SnapshotStore

S = TypeVar("S")


class Projection(Protocol[S]):
    """A pure fold over a game's records, with its own (de)serialisation for snapshots."""

    version: str  # snapshots taken under another version are ignored (a rules change re-folds from event 1)

    def initial(self, game_id: str) -> S: ...
    def apply(self, state: S, record: EventRecord) -> S: ...
    def dumps(self, state: S) -> bytes: ...
    def loads(self, data: bytes) -> S: ...


@dataclass(frozen=True, slots=True)
class Loaded(Generic[S]):
    """A rebuilt game: its state after event ``seq`` and how much of it came from the log."""

    state: S
    seq: int
    from_snapshot: int  # seq of the snapshot used, 0 when folded from event 1
    replayed: int  # events folded from the log


class CatchUpReader(Generic[S]):
    """Rebuilds games from the log, using and refreshing snapshots every ``snapshot_every`` events."""

    def __init__(
        self,
        log: EventLog,
        projection: Projection[S],
        snapshots: SnapshotStore | None = None,
        snapshot_every: int = 100,
    ) -> None:
        if snapshot_every < 1:
            raise ValueError("snapshot_every must be >= 1")
        self._log = log
        self._projection = projection
        self._snapshots = snapshots
        self._every = snapshot_every

    def load(self, game_id: str) -> Loaded[S]:
        """Latest usable snapshot plus the tail of the log; saves a new snapshot when one is due."""
        p = self._projection
        snapshot = self._snapshots.load(game_id) if self._snapshots is not None else None
        if snapshot is not None and snapshot.rules_version == p.version:
            state, seq, base = p.loads(snapshot.state), snapshot.seq, snapshot.seq
            tail = self._log.read_stream(game_id, seq + 1, hint=snapshot.position)
        else:
            state, seq, base = p.initial(game_id), 0, 0
            tail = self._log.read_stream(game_id)
        replayed = 0
        last: EventRecord | None = None
        for record in tail:
            if record.seq != seq + 1:  # the log is gap-free; anything else is corruption, not a state
                raise StoreError(f"game {game_id}: expected seq {seq + 1}, log has {record.seq}")
            state = p.apply(state, record)
            seq, last, replayed = record.seq, record, replayed + 1
        if last is not None:
            self.after_append(game_id, state, last, base)
        return Loaded(state, seq, base, replayed)

    def after_append(self, game_id: str, state: S, last: EventRecord, previous_seq: int) -> None:
        """Snapshot policy: save when events ``previous_seq + 1 .. last.seq`` crossed a multiple of
        ``snapshot_every``. Writers call it after an append; ``load`` calls it after folding a tail."""
        if self._snapshots is not None and last.seq // self._every > previous_seq // self._every:
            p = self._projection
            self._snapshots.save(Snapshot(game_id, last.seq, last.position, p.version, p.dumps(state)))

    def rebuild_partition(self, partition: int) -> Iterator[tuple[str, S, int]]:
        """Fold every game of a partition from its first record: yields (game id, state, last seq) per game.

        Snapshots are neither read nor written: this is the path that must work when Redis is lost.
        """
        p = self._projection
        states: dict[str, tuple[S, int]] = {}
        for record in self._log.read_partition(partition):
            state, seq = states.get(record.game_id, (p.initial(record.game_id), 0))
            states[record.game_id] = (p.apply(state, record), record.seq)
        for game_id, (state, seq) in states.items():
            yield game_id, state, seq
