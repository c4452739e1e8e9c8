"""The only writer of one fence group of a Kafka event log's partitions, fenced by Kafka itself.

Its transactional producer's id names the group (`FenceGroups.transactional_id`; a group is one
partition unless the topic has fence groups), so whoever takes the group next calls `init_transactions`
with the same id: the broker bumps the producer epoch, aborts the old owner's open transaction and
refuses everything the old owner sends after that (KIP-98 zombie fencing). Readers read committed
records only, so nothing a fenced writer wrote ever counts. This is the storage-side fence a lease in
Redis cannot give.

A batch of appends (from any games of the group's partitions) is one transaction: one produce request,
one commit, one wait for acks=all. What the writer must know to check an append (each game's head, its
recent command ids) is in one `PartitionIndex` per partition, folded once when the group is taken, from
a checkpoint, and kept current by the writer's own commits.

Failures: fenced (another writer took the group) -> `NotWriterError` for the batch and the writer
stops; anything else (broker down, timeout) -> `StoreError` for the batch, the producer is dropped, and
the next batch starts a new one with the same id (its `init_transactions` settles the failed
transaction) and folds the partitions again from before the last commit in doubt, so the log decides
what the failed batch (and the one before it) wrote and a retried command is answered from it. Every
wait is bounded by `timeout_s`.

In doubt: a lone broker killed within ~50 ms of acknowledging a commit was seen to abort it on
restart. A commit is certain once the next one succeeds (the broker answers the next transaction's
first request only after it wrote the last one's markers), so the writer keeps a `Savepoint` of the
last commit only: a failure rolls its records back out of the indexes, and checkpoints are written
without them. Undoing costs one commit's read, not the partition's history, which grows for ever.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rummy_store.checkpoints import CheckpointStore
from rummy_store.errors import ConcurrencyError, NotWriterError, StoreError
from rummy_store.event_log import validate_append
from rummy_store.fence_groups import FenceGroups
from rummy_store.kafka_clients import Backend, Outgoing, TransactionalProducer
from rummy_store.kafka_records import headers
from rummy_store.partition_index import CLOSING_TYPES, PartitionIndex, Savepoint
from rummy_store.partitioning import partition_for
from rummy_store.records import Append, AppendResult, EventRecord, LogPosition

log = logging.getLogger("rummy_store")
Reader = Callable[[Mapping[int, int]], Iterator[EventRecord]]
"""{partition: from_offset} -> those partitions' committed records up to their ends."""


@dataclass(frozen=True, slots=True)
class _Planned:
    index: int  # into the batch
    append: Append
    partition: int
    first_seq: int


class FencedWriter:
    """Claims one fence group, then commits batches of appends to its partitions, one transaction each."""

    def __init__(
        self,
        bootstrap: str,
        fences: FenceGroups,
        group: int,
        reader: Reader,
        checkpoints: CheckpointStore | None = None,
        *,
        backend: Backend,
        timeout_s: float = 10.0,
        checkpoint_every_s: float = 5.0,
        closing_types: frozenset[str] = CLOSING_TYPES,
        reclaim: bool = True,
        compacted: bool = False,
    ) -> None:
        self._backend = backend
        self._bootstrap = bootstrap
        self._fences = fences
        self.group = group
        self.partitions = fences.partitions_of(group)
        self._name = f"{fences.topic}[{', '.join(map(str, self.partitions))}]"
        self._reader = reader
        self._checkpoints = checkpoints
        self._timeout_s = timeout_s
        self._checkpoint_every_s = checkpoint_every_s
        self._closing = closing_types
        self._compacted = compacted  # the topic keeps each key's last record only (PartitionIndex)
        # Whether a batch after a failed one starts a new producer itself. Not where a consumer group
        # assigns the group: a fence kafka-python reports as another error would otherwise make this
        # writer fence the group's new owner back; the owner of the assignment calls `claim`.
        self._reclaim = reclaim
        self._lock = threading.Lock()  # one transaction at a time: one producer, in order
        self._producer: TransactionalProducer | None = None
        self._indexes: dict[int, PartitionIndex] = {}  # by partition; empty: fold from a checkpoint
        self._in_doubt: dict[int, Savepoint] = {}  # by partition: the indexes before the last commit
        self._ready_once = False
        self._fenced = False
        self._failure: str | None = None  # why the last batch failed, until one succeeds
        self._checkpointed = 0.0

    @property
    def fenced(self) -> bool:
        """Another writer took the group: this one will not write it again."""
        return self._fenced

    @property
    def failure(self) -> str | None:
        """Why this writer cannot deliver now (None when its last batch or claim succeeded)."""
        return self._failure

    def _checkpoint_name(self, partition: int) -> str:
        return f"{self._fences.topic}:{partition}"

    # --- claiming -----------------------------------------------------------------------------------

    def claim(self) -> None:
        """Take the group (fencing any other writer) and bring each partition's index up to its end."""
        with self._lock:
            self._ready()

    def _ready(self) -> dict[int, PartitionIndex]:
        if self._fenced:
            raise NotWriterError(f"{self._name}: another writer took these partitions")
        if self._producer is not None:
            return self._indexes
        try:
            began = time.monotonic()
            producer = self._new_producer()
            try:
                made = time.monotonic()
                producer.init()  # fences the previous owner, settles its open transaction
                fenced = time.monotonic()
                indexes = self._indexes or {p: self._from_checkpoint(p) for p in self.partitions}
                for record in self._reader({p: index.offset for p, index in indexes.items()}):
                    indexes[record.position.partition].fold((record,))
            except BaseException:
                producer.abandon()
                raise
            steps = {"producer": made - began, "init_transactions": fenced - made}
            steps["tails"] = time.monotonic() - fenced
            log.info("%s taken", self._name, extra={"seconds": {k: round(v, 3) for k, v in steps.items()}})
        except NotWriterError:
            raise
        except Exception as exc:
            self._failure = f"cannot take {self._name}: {exc!r}"
            raise StoreError(self._failure) from exc
        self._producer, self._indexes, self._failure = producer, indexes, None
        self._ready_once = True
        return indexes

    def _new_producer(self) -> TransactionalProducer:
        tid = self._fences.transactional_id(self.group)
        return self._backend.transactional_producer(self._bootstrap, tid, self._timeout_s)

    def _from_checkpoint(self, partition: int) -> PartitionIndex:
        index = self._new_index(partition)
        if self._checkpoints is None:
            return index
        name = self._checkpoint_name(partition)
        try:
            data = self._checkpoints.load(name)
            if data is not None:
                index.load(data)
        except Exception as exc:  # a cache: read the partition from its start instead
            log.warning("checkpoint of %s unusable (%s): reading from offset 0", name, exc)
            index = self._new_index(partition)
        return index

    def _new_index(self, partition: int) -> PartitionIndex:
        return PartitionIndex(partition, closing_types=self._closing, compacted=self._compacted)

    # --- writing ------------------------------------------------------------------------------------

    def commit(self, batch: Sequence[Append]) -> list[AppendResult | StoreError | ValueError]:
        """Check every append against its partition's index, then write the accepted ones in one
        transaction.

        Each append gets its own answer: a result (or the earlier one, `duplicate`, for a known
        command id), `ConcurrencyError` for a stale expected seq, `ValueError` for bad input; when
        the transaction fails, every accepted append gets the same `NotWriterError` or `StoreError`.
        """
        with self._lock:
            answers: list[AppendResult | StoreError | ValueError] = []
            if self._producer is None and self._ready_once and not self._reclaim and not self._fenced:
                return [StoreError(f"{self._failure}; retry the same command id")] * len(batch)
            try:
                indexes = self._ready()
            except StoreError as exc:
                return [exc] * len(batch)
            planned: list[_Planned] = []
            heads: dict[str, int] = {}  # heads as this batch moves them
            for i, append in enumerate(batch):
                partition = partition_for(append.game_id, self._fences.partitions)
                index = indexes.get(partition)
                if index is None:
                    answers.append(ValueError(f"game {append.game_id} is not in {self._name}"))
                    continue
                answers.append(self._check(index, append, heads))
                if answers[-1] is _ACCEPTED:
                    first = heads[append.game_id] - len(append.events) + 1
                    planned.append(_Planned(i, append, partition, first))
            if planned:
                for plan, result in zip(planned, self._write(indexes, planned), strict=True):
                    answers[plan.index] = result
            self._checkpoint()
            return answers

    def _check(self, index: PartitionIndex, append: Append, heads: dict[str, int]) -> Any:
        try:
            validate_append(append.game_id, append.command_id, append.expected_seq, append.events)
        except ValueError as exc:
            return exc
        head = index.head(append.game_id)
        known = head.commands.get(append.command_id) if head is not None else None
        if known is not None:
            return AppendResult(append.game_id, known.first_seq, known.last_seq, known.positions, True)
        now = heads.get(append.game_id, head.seq if head is not None else 0)
        if now != append.expected_seq or (head is not None and head.ended):
            return ConcurrencyError(append.game_id, append.expected_seq, now)
        heads[append.game_id] = now + len(append.events)
        return _ACCEPTED

    def _write(
        self, indexes: dict[int, PartitionIndex], planned: list[_Planned]
    ) -> list[AppendResult | StoreError]:
        producer = self._producer
        assert producer is not None
        deadline = time.monotonic() + self._timeout_s
        records = [
            Outgoing(
                p.partition,
                p.append.game_id.encode(),
                event.payload,
                headers(event, p.first_seq + n, p.append.command_id),
            )
            for p in planned
            for n, event in enumerate(p.append.events)
        ]
        try:
            flat = producer.transact(self._fences.topic, records, deadline)
            offsets, at = [], 0
            for p in planned:
                offsets.append(flat[at : at + len(p.append.events)])
                at += len(p.append.events)
        except Exception as exc:
            return [self._failed(exc)] * len(planned)
        touched: dict[int, set[str]] = {}
        for p in planned:
            touched.setdefault(p.partition, set()).add(p.append.game_id)
        self._in_doubt = {part: indexes[part].savepoint(games) for part, games in touched.items()}
        results: list[AppendResult | StoreError] = []
        for p, offs in zip(planned, offsets, strict=True):
            positions = tuple(LogPosition(p.partition, o) for o in offs)
            index = indexes[p.partition]
            for n, (event, position) in enumerate(zip(p.append.events, positions, strict=True)):
                index.add(p.append.game_id, p.first_seq + n, p.append.command_id, event.event_type, position)
            last_seq = p.first_seq + len(offs) - 1
            results.append(AppendResult(p.append.game_id, p.first_seq, last_seq, positions))
        self._failure = None
        return results

    def _failed(self, exc: Exception) -> StoreError:
        """Drop the producer; fenced -> stop for good, anything else -> a new producer next time."""
        producer, self._producer = self._producer, None
        # The last commit is in doubt (module docstring): out of the indexes, which the next claim folds
        # from there, so the heads are the log's and no append leaves a gap.
        for partition, point in self._in_doubt.items():
            self._indexes[partition].rollback(point)
        self._in_doubt = {}
        fenced = producer is not None and producer.fenced(exc)
        if producer is not None:
            producer.abandon()
        if fenced:
            self._fenced = True
            self._failure = f"{self._name}: fenced by a newer writer"
            log.warning("%s; this writer stops", self._failure)
            return NotWriterError(f"{self._failure}; retry with the same command id")
        self._failure = f"{self._name}: batch failed ({exc!r})"
        log.warning("%s; the next batch starts a new producer", self._failure)
        return StoreError(f"{self._failure}; the log decides what was written: retry the same command id")

    def _checkpoint(self, force: bool = False) -> None:
        if self._checkpoints is None or self._producer is None:
            return
        if not force and time.monotonic() - self._checkpointed < self._checkpoint_every_s:
            return
        self._checkpointed = time.monotonic()
        for partition, index in self._indexes.items():
            try:  # without the commit in doubt: the next owner reads it from the log if it stands
                self._checkpoints.save(
                    self._checkpoint_name(partition), index.dumps(self._in_doubt.get(partition))
                )
            except Exception as exc:  # a cache: the next owner reads more of the partition, nothing else
                log.warning("checkpoint of %s not saved: %s", self._checkpoint_name(partition), exc)
                return

    def index(self, partition: int) -> PartitionIndex | None:
        """The partition's index while this writer holds the group (None before its first claim)."""
        return self._indexes.get(partition) if self._ready_once else None

    def close(self) -> None:
        """Stop writing (a graceful handover: save checkpoints so the next owner reads little)."""
        with self._lock:
            self._checkpoint(force=True)
            if self._producer is not None:
                self._producer.close(self._timeout_s)
                self._producer = None


_ACCEPTED: Any = object()
