"""The Kafka client calls the store makes, as one small interface with two implementations.

The store's logic (fencing, indexes, reads up to the committed end, ownership) is written once, over
these calls; `kafka_python_clients` (kafka-python, the default) and `rdkafka_clients` (confluent-kafka
on librdkafka, about 3.6x less CPU per transaction) implement them. Both write the same records
(key, value, headers, explicit partition from `partitioning.partition_for`), use the same
transactional ids and the same consumer group protocol (eager, range/roundrobin), so instances on
either backend fence each other and share one group: a cluster moves from one to the other by a
rolling restart. The backend is named by the store URL (`locations`).
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

KAFKA_PYTHON: Final = "kafka-python"
RDKAFKA: Final = "rdkafka"
BACKENDS: Final = (KAFKA_PYTHON, RDKAFKA)


@dataclass(frozen=True, slots=True)
class Message:
    """A record as read, in the attribute names `kafka_records.decode` reads."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: Sequence[tuple[str, bytes]]


@dataclass(frozen=True, slots=True)
class Outgoing:
    """A record to write: its partition is chosen by the caller (`partition_for`), never the client."""

    partition: int
    key: bytes
    value: bytes
    headers: list[tuple[str, bytes]]


class TransactionalProducer(abc.ABC):
    """One transactional id's producer (`fenced_writer`)."""

    @abc.abstractmethod
    def init(self) -> None:
        """`init_transactions`: fences older producers of the id and settles their open transaction."""

    @abc.abstractmethod
    def transact(self, topic: str, records: Sequence[Outgoing], deadline: float) -> list[int]:
        """Begin, send, commit, all by `deadline` (monotonic); the records' offsets. Raises on failure."""

    @abc.abstractmethod
    def fenced(self, exc: BaseException) -> bool:
        """Whether the failure `exc` (or the producer's state after it) means a newer producer fenced it."""

    @abc.abstractmethod
    def abandon(self) -> None:
        """Close without waiting (a failed producer may be stuck)."""

    @abc.abstractmethod
    def close(self, timeout_s: float) -> None: ...


class Producer(abc.ABC):
    """An idempotent acks=all producer (`publisher`)."""

    @abc.abstractmethod
    def partitions(self, topic: str) -> set[int]:
        """The topic's partitions (retried while a just-created topic shows none); empty after that."""

    @abc.abstractmethod
    def send_all(self, topic: str, records: Sequence[Outgoing], timeout_s: float) -> None:
        """Send every record, then wait for all of them to be acknowledged."""

    @abc.abstractmethod
    def close(self) -> None: ...


class PartitionReader(abc.ABC):
    """A read_committed consumer with no group, positioned by the caller (`KafkaEventLog`'s reads).
    Not thread-safe: the log serialises its calls."""

    @abc.abstractmethod
    def partitions(self, topic: str) -> set[int]:
        """As `Producer.partitions`."""

    @abc.abstractmethod
    def end_offsets(self, topic: str, partitions: Sequence[int], timeout_s: float) -> dict[int, int]:
        """The last stable offsets; raises `StoreError` when the broker does not answer."""

    @abc.abstractmethod
    def fetch(self, topic: str, offsets: dict[int, int]) -> tuple[list[Message], dict[int, int]]:
        """One short poll of the partitions from `offsets` (re-positioned only if they moved): the
        records and each partition's position after them, past markers and aborted records."""

    @abc.abstractmethod
    def close(self) -> None: ...


class GroupReader(abc.ABC):
    """A member of a consumer group reading a topic from its committed offsets (`Subscription`)."""

    @abc.abstractmethod
    def poll(self, timeout_s: float) -> list[Message]: ...

    @abc.abstractmethod
    def commit(self) -> None: ...

    @abc.abstractmethod
    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Rebalance:
    """What a membership reports from inside its `poll` (partitions of the ownership topic)."""

    revoked: Callable[[set[int]], None]
    assigned: Callable[[set[int]], None]


class Membership(abc.ABC):
    """A consumer group member that reads nothing (`ownership`): its assignment is the ownership."""

    @abc.abstractmethod
    def poll(self, timeout_s: float) -> None:
        """Keep the membership; rebalance callbacks run here, on the caller's thread."""

    @abc.abstractmethod
    def generation(self) -> int | None:
        """The generation whose assignment this member holds, or None when in doubt (joining, or no
        sign from the group within the membership lease). Any thread may call it."""

    @abc.abstractmethod
    def joined_generation(self) -> int:
        """The generation of the assignment being applied (called from the `assigned` callback)."""

    @abc.abstractmethod
    def lapsed(self) -> bool:
        """Called once per assignment: whether this member missed a generation since the last one
        (its session expired and the group went on), so what it held may have been written by another."""

    @abc.abstractmethod
    def rejoin(self) -> bool:
        """Ask the group for a new assignment; False (nothing done) while one is under way."""

    @abc.abstractmethod
    def close(self) -> None: ...


class Admin(abc.ABC):
    """Topic administration (`kafka_topic`, `fence_groups`)."""

    @abc.abstractmethod
    def brokers(self) -> int: ...

    @abc.abstractmethod
    def create_topic(self, topic: str, partitions: int, factor: int, configs: dict[str, str]) -> bool:
        """Create the topic; False when it exists already."""

    @abc.abstractmethod
    def config(self, topic: str, name: str) -> str | None:
        """One config value of an existing topic."""

    @abc.abstractmethod
    def partition_count(self, topic: str) -> int | None:
        """None when the topic does not exist (asked without creating it)."""

    @abc.abstractmethod
    def close(self) -> None: ...


class Backend(abc.ABC):
    """Makes the clients of one library."""

    name: str

    @abc.abstractmethod
    def transactional_producer(
        self, bootstrap: str, transactional_id: str, timeout_s: float
    ) -> TransactionalProducer: ...

    @abc.abstractmethod
    def producer(self, bootstrap: str) -> Producer: ...

    @abc.abstractmethod
    def partition_reader(self, bootstrap: str, timeout_s: float) -> PartitionReader: ...

    @abc.abstractmethod
    def group_reader(self, bootstrap: str, topic: str, group_id: str) -> GroupReader: ...

    @abc.abstractmethod
    def membership(self, bootstrap: str, group: str, topic: str, rebalance: Rebalance) -> Membership: ...

    @abc.abstractmethod
    def admin(self, bootstrap: str) -> Admin: ...


def backend(name: str = KAFKA_PYTHON) -> Backend:
    """The backend called `name` (one of BACKENDS); its library is imported only when chosen."""
    if name == KAFKA_PYTHON:
        from rummy_store.kafka_python_clients import KafkaPythonBackend

        return KafkaPythonBackend()
    if name == RDKAFKA:
        from rummy_store.rdkafka_clients import RdkafkaBackend

        return RdkafkaBackend()
    raise ValueError(f"unknown Kafka backend {name[:40]!r}: one of {', '.join(BACKENDS)}")
