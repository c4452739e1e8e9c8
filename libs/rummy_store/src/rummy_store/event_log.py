"""The ``EventLog`` interface every backend implements, checked by one contract test suite."""

from __future__ import annotations

import abc
from collections.abc import Iterator, Mapping, Sequence
from typing import Self

from rummy_store.errors import StoreError
from rummy_store.partitioning import partition_for
from rummy_store.records import Append, AppendResult, EventRecord, LogPosition, NewEvent

TOPIC = "rummy.game.events.v1"  # STYLE.md 7.7: rummy.<area>.<kind>.v1, keyed by game id


class Subscription(abc.ABC):
    """A consumer-group member: reads every partition it is assigned from the group's committed position."""

    @abc.abstractmethod
    def poll(self, timeout_s: float) -> list[EventRecord]:
        """The next records (possibly none after ``timeout_s``), in log order per partition."""

    @abc.abstractmethod
    def commit(self) -> None:
        """Record everything returned so far as processed by the group."""

    @abc.abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class EventLog(abc.ABC):
    """An append-only log of game events, partitioned by game id, with per-game optimistic concurrency."""

    partitions: int

    def partition_for(self, game_id: str) -> int:
        return partition_for(game_id, self.partitions)

    def commit_unit(self, game_id: str) -> int:
        """Appends of games with the same unit may share one write (`append_batch`): the partition
        here; on Kafka the fence group, whose partitions one transaction spans."""
        return self.partition_for(game_id)

    @abc.abstractmethod
    def append(
        self, game_id: str, command_id: str, expected_seq: int, events: Sequence[NewEvent]
    ) -> AppendResult:
        """Append ``events`` as seq ``expected_seq + 1 ...`` if the game's last seq is ``expected_seq``.

        A command id already appended for this game returns its earlier result (``duplicate=True``) and
        appends nothing, so clients may retry. Raises ``ConcurrencyError`` when ``expected_seq`` is stale,
        ``ValueError`` for empty or malformed input; in every error case the log is unchanged.
        """

    def append_batch(self, batch: Sequence[Append]) -> list[AppendResult | StoreError | ValueError]:
        """Several appends, each answered as `append` would answer it (a result or the error it raises).

        Backends that can write a batch at once (Kafka: one transaction per partition) override this;
        the answers are in the batch's order.
        """
        answers: list[AppendResult | StoreError | ValueError] = []
        for a in batch:
            try:
                answers.append(self.append(a.game_id, a.command_id, a.expected_seq, a.events))
            except (StoreError, ValueError) as exc:
                answers.append(exc)
        return answers

    @abc.abstractmethod
    def last_seq(self, game_id: str) -> int:
        """The game's last sequence number (0 for a game with no events)."""

    @abc.abstractmethod
    def read_stream(
        self, game_id: str, from_seq: int = 1, hint: LogPosition | None = None
    ) -> Iterator[EventRecord]:
        """The game's events with ``seq >= from_seq`` in order.

        ``hint`` is a position at or before the first wanted record (e.g. a snapshot's); it lets a log
        without a per-game index skip the head of the partition.
        """

    def read_streams(self, wanted: Mapping[str, tuple[int, LogPosition | None]]) -> Iterator[EventRecord]:
        """`read_stream` of several games (game id -> (from_seq, hint)): each game's records in order,
        the games' interleaved. A log without a per-game index overrides it to read each partition
        once for all of them (a takeover loads its partitions' games together)."""
        for game_id, (from_seq, hint) in wanted.items():
            yield from self.read_stream(game_id, from_seq, hint)

    @abc.abstractmethod
    def read_partition(self, partition: int, from_offset: int = 0) -> Iterator[EventRecord]:
        """Every record of a partition from ``from_offset`` up to the end as of the call."""

    @abc.abstractmethod
    def end_offset(self, partition: int) -> int:
        """An offset past every record of the partition written so far (the next record gets it or a
        later one: on Kafka, transaction markers take offsets too)."""

    @abc.abstractmethod
    def subscribe(self, group_id: str) -> Subscription:
        """Join consumer group ``group_id``; a new group starts from the beginning of the log."""

    @abc.abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def validate_append(game_id: str, command_id: str, expected_seq: int, events: Sequence[NewEvent]) -> None:
    """Reject bad input before anything is written (shared by every backend)."""
    if not game_id or not command_id:
        raise ValueError("game id and command id must be non-empty")
    if expected_seq < 0:
        raise ValueError(f"expected_seq must be >= 0, got {expected_seq}")
    if not events:
        raise ValueError("an append needs at least one event")
    for event in events:
        if not event.event_type or event.schema_version < 1:
            raise ValueError(f"event needs a type and a schema version >= 1: {event!r}")
