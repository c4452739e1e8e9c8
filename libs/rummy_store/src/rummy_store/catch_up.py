"""Rebuilding state from the log: one game (snapshot + tail) or every game of a partition.

The fold is supplied by the caller as a ``Projection`` (the engine passes the rules engine's ``evolve``
over decoded envelopes; the store's own tests pass a plain fold over payload bytes), so the store never
imports the rules engine.

A record that does not fit is skipped, never fatal: one stray record (another tool's garbage payload,
an unknown event format, a seq that repeats or jumps) must not make its game, its partition's other
games or a restart fail. Each skip is logged once (topic[partition]@offset, game, seq, reason) and
counted (`CatchUpReader.skipped`). The rule, per game, in log order:

- the record after the last applied one (seq + 1) is applied; when the projection cannot apply it,
  it is skipped and its seq stays *pending*: a later record may still fill it (a writer that never saw
  the stray record writes its own record at that seq);
- a record right after a pending run (pending + 1) that applies is the next event: the writer counted
  the skipped records (a writer folding the log counts a record by its headers) and went on from the
  state without them;
- any other seq (a repeat, or a jump past the next one) is skipped.

A game whose last records are pending counts them when its writer does (`EventLog.last_seq` says so),
so the next append expects the seq the writer expects.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from rummy_store.event_log import EventLog
from rummy_store.records import EventRecord, LogPosition
from rummy_store.snapshots import Snapshot, SnapshotStore

log = logging.getLogger("rummy_store")
S = TypeVar("S")


class Projection(Protocol[S]):
    """A pure fold over a game's records, with its own (de)serialisation for snapshots.

    `apply` raises (anything) for a record it cannot apply: the reader skips that record.
    """

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


@dataclass(frozen=True, slots=True)
class Step(Generic[S]):
    """One record of a game as the fold met it: ``state`` after it, or unchanged when ``skipped`` says
    why the record was left out."""

    record: EventRecord
    state: S
    skipped: str = ""


class _Fold(Generic[S]):
    """One game's fold under the rule in the module docstring."""

    def __init__(self, projection: Projection[S], state: S, seq: int) -> None:
        self._projection = projection
        self.state = state
        self.seq = seq  # of the last applied (or counted) record
        self.pending = 0  # end of the run of skipped records from seq + 1 (0: none)

    def step(self, record: EventRecord) -> Step[S]:
        if record.seq == self.seq + 1 or (self.pending and record.seq == self.pending + 1):
            try:
                self.state = self._projection.apply(self.state, record)
            except Exception as exc:
                self.pending = max(self.pending, record.seq)
                return Step(record, self.state, f"cannot apply it: {type(exc).__name__}: {exc}"[:300])
            self.seq, self.pending = record.seq, 0
            return Step(record, self.state)
        if record.seq <= self.seq:
            return Step(record, self.state, f"seq {record.seq} repeats (the game is at seq {self.seq})")
        return Step(record, self.state, f"seq {record.seq} skips ahead (the game is at seq {self.seq})")

    def settle(self, log: EventLog, game_id: str) -> int:
        """The game's seq: the last applied one, or the end of a trailing pending run the writer counts."""
        if self.pending:
            self.seq = max(self.seq, min(self.pending, log.last_seq(game_id)))
            self.pending = 0
        return self.seq


class _Tail(Generic[S]):
    """A game's fold while `load_many` reads its tail."""

    def __init__(self, fold: _Fold[S]) -> None:
        self.fold = fold
        self.base = fold.seq  # the snapshot's seq, 0 without one
        self.replayed = 0
        self.last: EventRecord | None = None


class CatchUpReader(Generic[S]):
    """Rebuilds games from the log, using and refreshing snapshots every ``snapshot_every`` events.

    Snapshots are a cache both ways: one that cannot be read or decoded is logged and the game is
    folded from its first event instead.
    """

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
        # Kafka logs name their topic in skip reports; the embedded log has one file, no topic.
        self._where = str(getattr(log, "_topic", "embedded log"))
        self._count_lock = threading.Lock()
        self.skipped = 0  # records skipped by this reader (a gauge for operators and tests)

    def _start(self, game_id: str) -> tuple[_Fold[S], LogPosition | None]:
        """The fold from the latest usable snapshot (and the snapshot's position, where its tail
        starts), or from event 1 (None)."""
        p = self._projection
        if self._snapshots is not None:
            try:
                found = self._snapshots.load(game_id)
                if found is not None and found.rules_version == p.version:
                    return _Fold(p, p.loads(found.state), found.seq), found.position
            except Exception as exc:  # a cache: the log has it all
                log.warning("game %s: snapshot unusable (%s); folding from the log", game_id, exc)
        return _Fold(p, p.initial(game_id), 0), None

    def load(self, game_id: str) -> Loaded[S]:
        """Latest usable snapshot plus the tail of the log; saves a new snapshot when one is due."""
        return self.load_many([game_id])[game_id]

    def load_many(self, game_ids: Iterable[str]) -> dict[str, Loaded[S]]:
        """`load` of several games with one read of the log for all of them (`EventLog.read_streams`:
        on Kafka each partition once, from the earliest record one of its games needs)."""
        started = {game_id: self._start(game_id) for game_id in game_ids}
        folds = {game_id: _Tail(fold) for game_id, (fold, _) in started.items()}
        wanted = {game_id: (fold.seq + 1, hint) for game_id, (fold, hint) in started.items()}
        for record in self._log.read_streams(wanted):
            tail = folds[record.game_id]
            step = tail.fold.step(record)
            if step.skipped:
                self._report(step)
            else:
                tail.last, tail.replayed = record, tail.replayed + 1
        loaded = {}
        for game_id, tail in folds.items():
            seq = tail.fold.settle(self._log, game_id)
            if tail.last is not None:
                self.after_append(game_id, tail.fold.state, tail.last, tail.base)
            loaded[game_id] = Loaded(tail.fold.state, seq, tail.base, tail.replayed)
        return loaded

    def steps(self, game_id: str, records: Iterable[EventRecord] | None = None) -> Iterator[Step[S]]:
        """Every record of the game from event 1 (`records` when the caller read them already) with the
        state after it, skipped ones included and reported: for tools that show or check a whole game.
        Snapshots are not used."""
        fold = _Fold(self._projection, self._projection.initial(game_id), 0)
        for record in self._log.read_stream(game_id) if records is None else records:
            step = fold.step(record)
            if step.skipped:
                self._report(step)
            yield step

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
        folds: dict[str, _Fold[S]] = {}
        for record in self._log.read_partition(partition):
            fold = folds.get(record.game_id)
            if fold is None:
                fold = folds[record.game_id] = _Fold(p, p.initial(record.game_id), 0)
            step = fold.step(record)
            if step.skipped:
                self._report(step)
        for game_id, fold in folds.items():
            seq = fold.settle(self._log, game_id)
            yield game_id, fold.state, seq

    def _report(self, step: Step[S]) -> None:
        r = step.record
        with self._count_lock:
            self.skipped += 1
        log.warning(
            "skipped record %s: game %s seq %d (command %.40s): %s",
            self.where(r),
            r.game_id,
            r.seq,
            r.command_id,
            step.skipped,
        )

    def where(self, record: EventRecord) -> str:
        """Where a record sits, as skip reports say it: topic[partition]@offset."""
        return f"{self._where}[{record.position.partition}]@{record.position.offset}"
