"""The Kafka event log: topic ``rummy.game.events.v1`` keyed by game id, transactional writes, acks=all.

Record key = game id (so one game stays in one partition, in order), value = serialized envelope,
headers = event type, schema version, seq and command id (so readers filter without parsing payloads).
Each fence group (one partition, or a group of them: `fence_groups`) has one writer, fenced by Kafka
(`fenced_writer`); readers read committed records.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

from rummy_store.checkpoints import CheckpointStore
from rummy_store.errors import NotWriterError, StoreError
from rummy_store.event_log import TOPIC, EventLog, Subscription, validate_append
from rummy_store.fence_groups import FenceGroups, resolve
from rummy_store.fenced_writer import FencedWriter
from rummy_store.kafka_clients import KAFKA_PYTHON, GroupReader, PartitionReader, backend
from rummy_store.kafka_records import decode
from rummy_store.kafka_settings import METADATA_WAIT_S
from rummy_store.kafka_topic import FROM_CLUSTER, Replication, adopt_partitions, ensure_topic
from rummy_store.partition_index import PartitionIndex
from rummy_store.partitioning import DEFAULT_PARTITIONS
from rummy_store.records import Append, AppendResult, EventRecord, LogPosition, NewEvent

# Fence groups claimed at once (`claim_each`): the claims wait on the network, not on this process.
CLAIMS_AT_ONCE = 8


def _no_partitions(topic: str, bootstrap: str) -> StoreError:
    return StoreError(f"topic {topic} at {bootstrap}: no partition metadata after {METADATA_WAIT_S:g} s")


class KafkaEventLog(EventLog):
    """Event log on a Kafka topic. Read-only unless `writer` (then it writes through `PartitionWriter`s).

    A writer claims a fence group (`fence_groups`: one partition unless the topic has fence groups)
    before it appends to its partitions, fencing any other writer of the group. With `claim_on_demand`
    (tools, tests) the first append to a group claims it, and so does the first append after another
    writer fenced this one; without it (the engine, whose consumer group says which groups it owns)
    only `claim` does, and appends elsewhere raise `NotWriterError`. `fence_groups` asks for that many
    groups when the topic has none yet; a writer of a topic that has them follows them either way.
    Every read is read_committed: records of aborted or fenced transactions are never seen.
    `partitions` and `replication` are for a topic that is missing; an existing topic's own partition
    count is the log's `partitions` (`kafka_topic` says why). `compacted`: the topic keeps each key's
    last record only (each record is its key's whole state), so a key's seqs may jump.
    """

    def __init__(
        self,
        bootstrap: str,
        topic: str = TOPIC,
        partitions: int = DEFAULT_PARTITIONS,
        *,
        replication: Replication = FROM_CLUSTER,
        writer: bool = False,
        claim_on_demand: bool = True,
        fence_groups: int | None = None,
        checkpoints: CheckpointStore | None = None,
        timeout_s: float = 10.0,
        compacted: bool = False,
        client: str = KAFKA_PYTHON,
    ) -> None:
        self.backend = backend(client)
        ensure_topic(bootstrap, topic, partitions, replication, compacted=compacted, client=self.backend)
        self._compacted = compacted
        self._bootstrap = bootstrap
        self._topic = topic
        self._timeout_s = timeout_s
        self._reader = self.backend.partition_reader(bootstrap, timeout_s)
        actual = self._reader.partitions(topic)
        if not actual:
            self._reader.close()
            raise _no_partitions(topic, bootstrap)
        self.partitions = adopt_partitions(topic, bootstrap, partitions, actual)
        self.fences = (
            resolve(bootstrap, topic, self.partitions, fence_groups, replication, client=self.backend)
            if writer
            else FenceGroups(topic, self.partitions)
        )
        self._reader_lock = threading.Lock()
        self._writes = writer
        self._on_demand = claim_on_demand
        self._checkpoints = checkpoints
        self._writers: dict[int, FencedWriter] = {}  # by fence group
        self._writers_lock = threading.Lock()

    # -- owning fence groups ------------------------------------------------------------------------

    def claim(self, groups: Iterable[int]) -> None:
        """Become the only writer of these fence groups (fencing any other) and read their tails."""
        for group in groups:
            self._writer(group, claim=True).claim()

    def claim_each(self, groups: Iterable[int]) -> dict[int, BaseException]:
        """`claim` each fence group, CLAIMS_AT_ONCE at a time; the failures, by group.

        A claim is round trips (a new producer, its `init_transactions`, each partition's tail), so an
        instance given many groups one after another spent seconds in its consumer group's rebalance
        callback. Each group keeps its own producer and transactional id: the fence is unchanged.
        """
        wanted = sorted(groups)
        if not wanted:
            return {}
        with ThreadPoolExecutor(min(CLAIMS_AT_ONCE, len(wanted)), thread_name_prefix="claim") as pool:
            done = {g: pool.submit(self.claim, [g]) for g in wanted}
        return {g: exc for g, f in done.items() if (exc := f.exception()) is not None}

    def drop(self, groups: Iterable[int]) -> None:
        """Stop writing these fence groups (another instance is taking them); saves their checkpoints."""
        for group in groups:
            with self._writers_lock:
                writer = self._writers.pop(group, None)
            if writer is not None:
                writer.close()

    @property
    def owned(self) -> set[int]:
        """The fence groups this log writes (claimed, and not fenced since)."""
        with self._writers_lock:
            return {g for g, w in self._writers.items() if not w.fenced}

    @property
    def fenced(self) -> set[int]:
        """The fence groups claimed here whose writer another writer has fenced since."""
        with self._writers_lock:
            return {g for g, w in self._writers.items() if w.fenced}

    def writer_failures(self) -> list[str]:
        """Why owned fence groups cannot be written now ([] when every one can)."""
        with self._writers_lock:
            writers = [w for w in self._writers.values() if not w.fenced]
        return [w.failure for w in writers if w.failure is not None]

    def recover(self, groups: Iterable[int]) -> None:
        """Claim again those of `groups` whose writer failed (a new producer, the tails re-read), so
        the broker's return is found without waiting for a client's command. With `claim_on_demand`
        the next append does this itself."""
        wanted = set(groups)
        with self._writers_lock:
            failed = [w for g, w in self._writers.items() if g in wanted and w.failure and not w.fenced]
        for writer in failed:
            with contextlib.suppress(StoreError):
                writer.claim()

    def index(self, partition: int) -> PartitionIndex | None:
        """The claimed partition's index (open games, heads, recent command ids), or None."""
        with self._writers_lock:
            writer = self._writers.get(self.fences.group_of(partition))
        return writer.index(partition) if writer is not None and not writer.fenced else None

    def commit_unit(self, game_id: str) -> int:
        """The game's fence group: appends of one group can share a transaction."""
        return self.fences.group_of(self.partition_for(game_id))

    def _writer(self, group: int, *, claim: bool = False) -> FencedWriter:
        if not self._writes:
            raise NotWriterError("this KafkaEventLog was opened read-only")
        if not 0 <= group < self.fences.count:
            raise ValueError(f"fence group {group} out of range 0..{self.fences.count - 1}")
        with self._writers_lock:
            writer = self._writers.get(group)
            if writer is not None and (not writer.fenced or not (claim or self._on_demand)):
                return writer
            if not (claim or self._on_demand):
                raise NotWriterError(
                    f"{self._topic}{list(self.fences.partitions_of(group))} is not owned by this writer"
                )
            writer = FencedWriter(
                self._bootstrap,
                self.fences,
                group,
                self._read_tails,
                self._checkpoints,
                timeout_s=self._timeout_s,
                reclaim=self._on_demand,
                backend=self.backend,
                compacted=self._compacted,
            )
            self._writers[group] = writer
            return writer

    # -- writing -------------------------------------------------------------------------------------

    def append(
        self, game_id: str, command_id: str, expected_seq: int, events: Sequence[NewEvent]
    ) -> AppendResult:
        validate_append(game_id, command_id, expected_seq, events)
        (answer,) = self.append_batch([Append(game_id, command_id, expected_seq, events)])
        if isinstance(answer, Exception):
            raise answer
        return answer

    def append_batch(self, batch: Sequence[Append]) -> list[AppendResult | StoreError | ValueError]:
        """One transaction per fence group the batch touches (the engine sends one group's at a time)."""
        by_group: dict[int, list[int]] = {}
        for i, append in enumerate(batch):
            by_group.setdefault(self.commit_unit(append.game_id), []).append(i)
        answers: list[AppendResult | StoreError | ValueError] = [StoreError("not written")] * len(batch)
        for group, members in by_group.items():
            try:
                writer = self._writer(group)
            except StoreError as exc:
                for i in members:
                    answers[i] = exc
                continue
            for i, answer in zip(members, writer.commit([batch[i] for i in members]), strict=True):
                answers[i] = answer
        return answers

    # -- reading -------------------------------------------------------------------------------------

    def _scan_game(self, game_id: str, from_offset: int) -> Iterator[EventRecord]:
        return (
            r for r in self.read_partition(self.partition_for(game_id), from_offset) if r.game_id == game_id
        )

    def last_seq(self, game_id: str) -> int:
        index = self.index(self.partition_for(game_id))
        head = index.head(game_id) if index is not None else None
        if head is not None:
            return head.seq
        seq = 0  # not claimed here, or a game the index never saw or forgot: the log knows
        for record in self._scan_game(game_id, 0):
            seq = max(seq, record.seq)
        return seq

    def read_stream(
        self, game_id: str, from_seq: int = 1, hint: LogPosition | None = None
    ) -> Iterator[EventRecord]:
        # Kafka has no per-key index: scan the game's partition from the hint (a snapshot's position),
        # else from the game's first record when the partition's index still knows it.
        partition = self.partition_for(game_id)
        start = hint.offset if hint is not None and hint.partition == partition else self._first(game_id)
        return (r for r in self._scan_game(game_id, start) if r.seq >= from_seq)

    def read_streams(self, wanted: Mapping[str, tuple[int, LogPosition | None]]) -> Iterator[EventRecord]:
        """One read of each partition, from the earliest record any of its games wants: the games a
        takeover loads at once (a hundred, a few per partition) were a hundred reads, one after another
        on the one reader, 1.2 s on this box before the first of them could move."""
        starts: dict[str, tuple[int, int]] = {}  # game -> (first offset, from_seq)
        firsts: dict[int, int] = {}  # partition -> the earliest of its games' first offsets
        for game_id, (from_seq, hint) in wanted.items():
            partition = self.partition_for(game_id)
            start = hint.offset if hint is not None and hint.partition == partition else self._first(game_id)
            starts[game_id] = (start, from_seq)
            firsts[partition] = min(firsts.get(partition, start), start)
        for record in self.read_partitions(firsts):
            wants = starts.get(record.game_id)
            if wants is not None and record.position.offset >= wants[0] and record.seq >= wants[1]:
                yield record

    def _first(self, game_id: str) -> int:
        """The offset of the game's first record if this writer's index still holds the command that
        wrote it (a young game: fewer commands than the index keeps), else 0. A young game has no
        snapshot yet, and loading it from offset 0 read the whole partition's history: after a SIGKILL
        the new owner loaded each open game that way, one after another (75 s for 216 games here)."""
        index = self.index(self.partition_for(game_id))
        head = index.head(game_id) if index is not None else None
        if head is None:
            return 0
        firsts = [c.positions[0].offset for c in head.commands.values() if c.first_seq == 1 and c.positions]
        return min(firsts, default=0)

    def last_position(self, game_id: str) -> LogPosition | None:
        """Where the game's latest record sits, if this writer's index knows (a read from there is
        short), else None."""
        index = self.index(self.partition_for(game_id))
        head = index.head(game_id) if index is not None else None
        if head is None or not head.commands:
            return None
        positions = next(reversed(head.commands.values())).positions
        return positions[-1] if positions else None

    def read_partition(self, partition: int, from_offset: int = 0) -> Iterator[EventRecord]:
        """Committed records only; offsets of aborted records and transaction markers are stepped over."""
        return self.read_partitions({partition: from_offset})

    def read_partitions(self, starts: Mapping[int, int]) -> Iterator[EventRecord]:
        """`read_partition` of several partitions at once (partition -> first offset), each up to its
        end as of the call, in order within each partition. One fetch asks for all of them: a takeover
        reads the tails of a fence group's partitions, one round trip per partition on a busy engine
        took seconds."""
        return self._read(self._reader, self._reader_lock, starts)

    def _read_tails(self, starts: Mapping[int, int]) -> Iterator[EventRecord]:
        """A claim's read of its partitions' tails, on a reader of its own. The groups of a takeover
        are claimed in parallel, and on the one shared reader each claim's fetch re-positioned it
        under the others' (dropping the fetch in flight): up to 1.7 s of tails on a busy box."""
        reader = self.backend.partition_reader(self._bootstrap, self._timeout_s)
        try:
            yield from self._read(reader, threading.Lock(), starts)
        finally:
            reader.close()

    def _read(
        self, reader: PartitionReader, lock: threading.Lock, starts: Mapping[int, int]
    ) -> Iterator[EventRecord]:
        for partition in starts:
            if not 0 <= partition < self.partitions:
                raise ValueError(f"partition {partition} out of range 0..{self.partitions - 1}")
        ends = self._committed_ends(reader, lock, list(starts))
        offsets = {p: o for p, o in starts.items() if o < ends[p]}
        stalled_since = time.monotonic()
        while offsets:
            with lock:
                messages, positions = reader.fetch(self._topic, offsets)
            for message in messages:
                if message.offset < ends[message.partition] and (record := decode(message)) is not None:
                    yield record
            moved = {p: at for p, at in positions.items() if p in offsets and at > offsets[p]}
            if moved:
                stalled_since = time.monotonic()
                offsets.update(moved)
                offsets = {p: o for p, o in offsets.items() if o < ends[p]}
            elif time.monotonic() - stalled_since > self._timeout_s * 3:
                behind = ", ".join(f"[{p}] at {o} below end {ends[p]}" for p, o in sorted(offsets.items()))
                raise StoreError(f"{self._topic}: no records {behind}")

    def _committed_ends(
        self, reader: PartitionReader, lock: threading.Lock, partitions: list[int]
    ) -> dict[int, int]:
        """The ends of the committed records, each at least past this writer's own last commit.

        A commit returns once the transaction is decided; its markers land a moment later, and only
        then does the last stable offset move. Reading a partition it writes, a writer waits (a few
        ms, bounded) for that, so it reads its own writes.
        """
        written = {p: index.offset for p in partitions if (index := self.index(p)) is not None}
        with lock:
            ends = reader.end_offsets(self._topic, partitions, self._timeout_s)
        deadline = time.monotonic() + self._timeout_s
        while any(ends[p] < at for p, at in written.items()) and time.monotonic() < deadline:
            time.sleep(0.002)
            with lock:
                ends = reader.end_offsets(self._topic, partitions, self._timeout_s)
        return ends

    def end_offset(self, partition: int) -> int:
        """The end of the committed records (the last stable offset)."""
        with self._reader_lock:
            return self._reader.end_offsets(self._topic, [partition], self._timeout_s)[partition]

    def subscribe(self, group_id: str) -> Subscription:
        return _KafkaSubscription(self.backend.group_reader(self._bootstrap, self._topic, group_id))

    def close(self) -> None:
        self.drop(list(self._writers))
        self._reader.close()


class _KafkaSubscription(Subscription):
    """A member of a Kafka consumer group (classic protocol): partitions are split between members."""

    def __init__(self, reader: GroupReader) -> None:
        self._reader = reader

    def poll(self, timeout_s: float) -> list[EventRecord]:
        deadline = time.monotonic() + timeout_s
        while True:
            remaining = max(0.0, deadline - time.monotonic())
            records = [r for m in self._reader.poll(remaining) if (r := decode(m)) is not None]
            if records or remaining == 0:
                return records

    def commit(self) -> None:
        self._reader.commit()

    def close(self) -> None:
        self._reader.close()
