"""The only writer of one partition of a Kafka event log, fenced by Kafka itself.

Its transactional producer's id is derived from topic and partition, so whoever takes the partition
next calls `init_transactions` with the same id: the broker bumps the producer epoch, aborts the old
owner's open transaction and refuses everything the old owner sends after that (KIP-98 zombie
fencing). Readers read committed records only, so nothing a fenced writer wrote ever counts. This is
the storage-side fence a lease in Redis cannot give.

A batch of appends (from any games of the partition) is one transaction: one produce request, one
commit, one wait for acks=all. What the writer must know to check an append (each game's head, its
recent command ids) is in a `PartitionIndex` folded once when the partition is taken, from a
checkpoint, and kept current by the writer's own commits.

Failures: fenced (another writer took the partition) -> `NotWriterError` for the batch and the writer
stops; anything else (broker down, timeout) -> `StoreError` for the batch, the producer is dropped, and
the next batch starts a new one with the same id (its `init_transactions` settles the failed
transaction) and folds the partition again, so the log decides what the failed batch wrote and a
retried command is answered from it. Every wait is bounded by `timeout_s`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from kafka import KafkaProducer
from kafka import errors as kafka_errors

from rummy_store.checkpoints import CheckpointStore
from rummy_store.errors import ConcurrencyError, NotWriterError, StoreError
from rummy_store.event_log import validate_append
from rummy_store.kafka_records import headers
from rummy_store.partition_index import CLOSING_TYPES, PartitionIndex
from rummy_store.records import Append, AppendResult, EventRecord, LogPosition

log = logging.getLogger("rummy_store")
Reader = Callable[[int, int], Iterator[EventRecord]]
"""(partition, from_offset) -> the partition's committed records up to its end."""
_FENCED = (kafka_errors.ProducerFencedError, kafka_errors.InvalidProducerEpochError)


def transactional_id(topic: str, partition: int) -> str:
    return f"meldstream.{topic}.{partition}"


@dataclass(frozen=True, slots=True)
class _Planned:
    index: int  # into the batch
    append: Append
    first_seq: int


class PartitionWriter:
    """Claims one partition, then commits batches of appends to it, one transaction each."""

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        partition: int,
        reader: Reader,
        checkpoints: CheckpointStore | None = None,
        *,
        timeout_s: float = 10.0,
        checkpoint_every_s: float = 5.0,
        closing_types: frozenset[str] = CLOSING_TYPES,
        reclaim: bool = True,
    ) -> None:
        self._bootstrap = bootstrap
        self._topic = topic
        self.partition = partition
        self._reader = reader
        self._checkpoints = checkpoints
        self._timeout_s = timeout_s
        self._checkpoint_every_s = checkpoint_every_s
        self._closing = closing_types
        # Whether a batch after a failed one starts a new producer itself. Not where a consumer group
        # assigns the partition: a fence kafka-python reports as another error would otherwise make
        # this writer fence the partition's new owner back; the owner of the assignment calls `claim`.
        self._reclaim = reclaim
        self._lock = threading.Lock()  # one transaction at a time: one producer, in order
        self._producer: KafkaProducer | None = None
        self._index: PartitionIndex | None = None
        self._fenced = False
        self._failure: str | None = None  # why the last batch failed, until one succeeds
        self._checkpointed = 0.0

    @property
    def checkpoint_name(self) -> str:
        return f"{self._topic}:{self.partition}"

    @property
    def fenced(self) -> bool:
        """Another writer took the partition: this one will not write it again."""
        return self._fenced

    @property
    def failure(self) -> str | None:
        """Why this writer cannot deliver now (None when its last batch or claim succeeded)."""
        return self._failure

    # --- claiming -----------------------------------------------------------------------------------

    def claim(self) -> PartitionIndex:
        """Take the partition (fencing any other writer) and bring the index up to its end."""
        with self._lock:
            return self._ready()

    def _ready(self) -> PartitionIndex:
        if self._fenced:
            raise NotWriterError(f"{self._topic}[{self.partition}]: another writer took this partition")
        if self._producer is not None and self._index is not None:
            return self._index
        try:
            producer = self._new_producer()
            try:
                producer.init_transactions()  # fences the previous owner, settles its open transaction
                index = self._index or self._from_checkpoint()
                index.fold(self._reader(self.partition, index.offset))
            except BaseException:
                _abandon(producer)
                raise
        except NotWriterError:
            raise
        except Exception as exc:
            self._failure = f"cannot take {self._topic}[{self.partition}]: {exc!r}"
            raise StoreError(self._failure) from exc
        self._producer, self._index, self._failure = producer, index, None
        return index

    def _new_producer(self) -> KafkaProducer:
        timeout_ms = int(self._timeout_s * 1000)
        return KafkaProducer(
            bootstrap_servers=self._bootstrap,
            transactional_id=transactional_id(self._topic, self.partition),
            acks="all",
            linger_ms=0,
            # The next transaction's AddPartitionsToTxn is answered CONCURRENT_TRANSACTIONS until the
            # broker has written the last one's markers (a few ms): retry soon, not after 100 ms.
            retry_backoff_ms=5,
            request_timeout_ms=min(5_000, timeout_ms),
            delivery_timeout_ms=timeout_ms,
            max_block_ms=timeout_ms,
            transaction_timeout_ms=max(timeout_ms * 3, 30_000),
        )

    def _from_checkpoint(self) -> PartitionIndex:
        index = PartitionIndex(self.partition, closing_types=self._closing)
        if self._checkpoints is None:
            return index
        try:
            data = self._checkpoints.load(self.checkpoint_name)
            if data is not None:
                index.load(data)
        except Exception as exc:  # a cache: read the partition from its start instead
            log.warning("checkpoint of %s unusable (%s): reading from offset 0", self.checkpoint_name, exc)
            index = PartitionIndex(self.partition, closing_types=self._closing)
        return index

    # --- writing ------------------------------------------------------------------------------------

    def commit(self, batch: Sequence[Append]) -> list[AppendResult | StoreError | ValueError]:
        """Check every append against the index, then write the accepted ones in one transaction.

        Each append gets its own answer: a result (or the earlier one, `duplicate`, for a known
        command id), `ConcurrencyError` for a stale expected seq, `ValueError` for bad input; when
        the transaction fails, every accepted append gets the same `NotWriterError` or `StoreError`.
        """
        with self._lock:
            answers: list[AppendResult | StoreError | ValueError] = []
            if self._producer is None and self._index is not None and not self._reclaim:
                return [StoreError(f"{self._failure}; retry the same command id")] * len(batch)
            try:
                index = self._ready()
            except StoreError as exc:
                return [exc] * len(batch)
            planned: list[_Planned] = []
            heads: dict[str, int] = {}  # heads as this batch moves them
            for i, append in enumerate(batch):
                answers.append(self._check(index, append, heads))
                if answers[-1] is _ACCEPTED:
                    first = heads[append.game_id] - len(append.events) + 1
                    planned.append(_Planned(i, append, first))
            if planned:
                for plan, result in zip(planned, self._write(index, planned), strict=True):
                    answers[plan.index] = result
            self._checkpoint(index)
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

    def _write(self, index: PartitionIndex, planned: list[_Planned]) -> list[AppendResult | StoreError]:
        producer = self._producer
        assert producer is not None
        deadline = time.monotonic() + self._timeout_s
        try:
            producer.begin_transaction()
            futures = [
                [
                    producer.send(
                        self._topic,
                        key=p.append.game_id.encode(),
                        value=event.payload,
                        partition=self.partition,
                        headers=headers(event, p.first_seq + n, p.append.command_id),
                    )
                    for n, event in enumerate(p.append.events)
                ]
                for p in planned
            ]
            producer.flush(timeout=self._timeout_s)
            offsets = [[f.get(timeout=_left(deadline)).offset for f in fs] for fs in futures]
            _commit_within(producer, deadline)
        except Exception as exc:
            return [self._failed(exc)] * len(planned)
        results: list[AppendResult | StoreError] = []
        for p, offs in zip(planned, offsets, strict=True):
            positions = tuple(LogPosition(self.partition, o) for o in offs)
            for n, (event, position) in enumerate(zip(p.append.events, positions, strict=True)):
                index.add(p.append.game_id, p.first_seq + n, p.append.command_id, event.event_type, position)
            last_seq = p.first_seq + len(offs) - 1
            results.append(AppendResult(p.append.game_id, p.first_seq, last_seq, positions))
        self._failure = None
        return results

    def _failed(self, exc: Exception) -> StoreError:
        """Drop the producer; fenced -> stop for good, anything else -> a new producer next time."""
        producer, self._producer = self._producer, None
        # What this writer folded from its own commits is no longer to be trusted: a lone broker killed
        # within ~50 ms of acknowledging a commit was seen to abort it on restart. The next claim folds
        # the partition from its start (not a checkpoint, which may hold the same), so the heads are the
        # log's and no append leaves a gap. Rare and bounded by the partition's size.
        self._index = PartitionIndex(self.partition, closing_types=self._closing)
        fenced = isinstance(exc, _FENCED) or (producer is not None and _was_fenced(producer))
        if producer is not None:
            _abandon(producer)
        if fenced:
            self._fenced = True
            self._failure = f"{self._topic}[{self.partition}]: fenced by a newer writer"
            log.warning("%s; this writer stops", self._failure)
            return NotWriterError(f"{self._failure}; retry with the same command id")
        self._failure = f"{self._topic}[{self.partition}]: batch failed ({exc!r})"
        log.warning("%s; the next batch starts a new producer", self._failure)
        return StoreError(f"{self._failure}; the log decides what was written: retry the same command id")

    def _checkpoint(self, index: PartitionIndex) -> None:
        if self._checkpoints is None or time.monotonic() - self._checkpointed < self._checkpoint_every_s:
            return
        self._checkpointed = time.monotonic()
        try:
            self._checkpoints.save(self.checkpoint_name, index.dumps())
        except Exception as exc:  # a cache: the next owner reads more of the partition, nothing else
            log.warning("checkpoint of %s not saved: %s", self.checkpoint_name, exc)

    def index(self) -> PartitionIndex | None:
        return self._index

    def close(self) -> None:
        """Stop writing (a graceful handover: save a checkpoint so the next owner reads little)."""
        with self._lock:
            if self._index is not None and self._producer is not None:
                self._checkpointed = 0.0
                self._checkpoint(self._index)
            if self._producer is not None:
                self._producer.close(timeout=self._timeout_s)
                self._producer = None


_ACCEPTED: Any = object()


def _commit_within(producer: KafkaProducer, deadline: float) -> None:
    """`commit_transaction` with a bound: kafka-python's waits forever for a broker that went away."""
    result = producer._transaction_manager.begin_commit()
    producer._sender.wakeup()
    if not result.wait(timeout_ms=int(_left(deadline) * 1000)):
        raise kafka_errors.KafkaTimeoutError("commit not acknowledged in time")


def _abandon(producer: KafkaProducer) -> None:
    """Close a producer that failed without waiting for it: a stuck one may raise on the way out too."""
    try:
        producer.close(timeout=0)
    except Exception as exc:
        log.info("closing a failed producer: %r", exc)


def _was_fenced(producer: KafkaProducer) -> bool:
    """A fence can surface as another error (an EndTxn refused after AddPartitionsToTxn was fenced):
    the transaction manager keeps the error that made it fail."""
    last = producer._transaction_manager.last_error
    return isinstance(last, _FENCED)


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())
