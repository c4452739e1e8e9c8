"""What the single writer of a partition knows without reading the partition again.

Per stream (a game): its head seq, whether it ended, and its recent command ids with what they
appended. The writer folds the partition into it once when it takes the partition (from a checkpoint),
then adds its own appends, so an append, a new stream and a retried command read nothing from Kafka.
Memory is bounded: ended streams are forgotten oldest first past `ended_kept`, and each stream keeps
its last `commands_kept` command ids (a retry comes seconds after its command, not hundreds of
commands later). Folding is idempotent (a record at or below its stream's head is skipped), so a
checkpoint may be older than records already folded.

A `Savepoint` taken before the writer adds a commit's records undoes them (`rollback`), and
`dumps(before=...)` writes a checkpoint without them: the writer's last commit stays in doubt until
its next one succeeds, and undoing it costs a read of that commit, not of the whole partition.
"""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

from rummy_store.records import EventRecord, LogPosition

log = logging.getLogger("rummy_store")
CLOSING_TYPES = frozenset({"game_ended"})
"""Event types after which a stream takes no more appends (the engine's `GameEnded`)."""


@dataclass(frozen=True, slots=True)
class CommandRecord:
    first_seq: int
    last_seq: int
    positions: tuple[LogPosition, ...]


@dataclass(slots=True)
class StreamHead:
    seq: int = 0
    ended: bool = False
    commands: OrderedDict[str, CommandRecord] = field(default_factory=OrderedDict)


@dataclass(frozen=True, slots=True)
class Savepoint:
    """The index as it was for some streams: its offset, and each stream's head (None: unseen)."""

    offset: int
    heads: dict[str, StreamHead | None]


def _copy(head: StreamHead) -> StreamHead:
    return StreamHead(head.seq, head.ended, OrderedDict(head.commands))


class PartitionIndex:
    """Heads and recent command ids of one partition's streams, folded from its records."""

    def __init__(
        self,
        partition: int,
        offset: int = 0,
        *,
        closing_types: frozenset[str] = CLOSING_TYPES,
        commands_kept: int = 64,
        ended_kept: int = 2_000,
        compacted: bool = False,
    ) -> None:
        self.partition = partition
        self.offset = offset  # the next offset to fold
        self.broken = 0  # records skipped because they break their stream's sequence
        self._closing = closing_types
        # On a compacted topic the broker keeps only each stream's last record, so a stream's seqs
        # jump where records were compacted away: a later seq is the stream's new head, not a break.
        self._compacted = compacted
        self._commands_kept = commands_kept
        self._ended_kept = ended_kept
        self._open: dict[str, StreamHead] = {}
        self._ended: OrderedDict[str, StreamHead] = OrderedDict()

    def head(self, stream: str) -> StreamHead | None:
        """The stream's head, or None for a stream this index never saw or has forgotten."""
        return self._open.get(stream) or self._ended.get(stream)

    @property
    def open_streams(self) -> list[str]:
        return list(self._open)

    def __len__(self) -> int:
        return len(self._open) + len(self._ended)

    def fold(self, records: Iterable[EventRecord]) -> None:
        for record in records:
            self.add(record.game_id, record.seq, record.command_id, record.event_type, record.position)

    def add(self, stream: str, seq: int, command_id: str, event_type: str, position: LogPosition) -> None:
        """One appended record; one that breaks its stream's sequence is reported and skipped."""
        self.offset = max(self.offset, position.offset + 1)
        head = self.head(stream) or self._open.setdefault(stream, StreamHead())
        if seq <= head.seq:
            return  # folded already (the checkpoint was older than this record)
        if (seq != head.seq + 1 and not self._compacted) or head.ended:
            self.broken += 1
            log.warning(
                "partition %d offset %d: %s seq %d after head %d%s: skipped",
                position.partition,
                position.offset,
                stream,
                seq,
                head.seq,
                " (ended)" if head.ended else "",
            )
            return
        head.seq = seq
        known = head.commands.get(command_id)
        positions = (*known.positions, position) if known else (position,)
        head.commands[command_id] = CommandRecord(known.first_seq if known else seq, seq, positions)
        head.commands.move_to_end(command_id)
        while len(head.commands) > self._commands_kept:
            head.commands.popitem(last=False)
        if event_type in self._closing:
            self._end(stream, head)

    def _end(self, stream: str, head: StreamHead) -> None:
        self._open.pop(stream, None)
        head.ended = True
        while len(head.commands) > 1:  # only the closing command may still be retried
            head.commands.popitem(last=False)
        self._ended[stream] = head
        while len(self._ended) > self._ended_kept:
            self._ended.popitem(last=False)

    # --- undoing a commit in doubt ----------------------------------------------------------------------

    def savepoint(self, streams: Iterable[str]) -> Savepoint:
        """What `rollback` needs to undo records of `streams` added after this call."""
        heads = {stream: self.head(stream) for stream in streams}
        return Savepoint(self.offset, {stream: head and _copy(head) for stream, head in heads.items()})

    def rollback(self, point: Savepoint) -> None:
        """Forget what was added to the savepoint's streams since it was taken, and fold again from its
        offset (an ended stream forgotten meanwhile to keep `ended_kept` stays forgotten)."""
        self.offset = point.offset
        for stream, head in point.heads.items():
            self._open.pop(stream, None)
            self._ended.pop(stream, None)
            if head is not None:
                (self._ended if head.ended else self._open)[stream] = _copy(head)

    # --- checkpoints --------------------------------------------------------------------------------

    def dumps(self, before: Savepoint | None = None) -> bytes:
        """The index as a checkpoint; `before`: as it was at that savepoint for its streams."""

        def one(head: StreamHead) -> list[object]:
            commands = [
                [cid, c.first_seq, c.last_seq, [p.offset for p in c.positions]]
                for cid, c in head.commands.items()
            ]
            return [head.seq, head.ended, commands]

        streams = {s: one(h) for s, h in (*self._ended.items(), *self._open.items())}
        offset = self.offset
        if before is not None:
            offset = before.offset
            for stream, head in before.heads.items():
                if head is None:
                    streams.pop(stream, None)
                else:
                    streams[stream] = one(head)
        return json.dumps({"partition": self.partition, "offset": offset, "streams": streams}).encode()

    def load(self, data: bytes) -> None:
        """Replace this index with a checkpoint's (ValueError when it is not one of this partition)."""
        raw = json.loads(data)
        if raw.get("partition") != self.partition:
            raise ValueError(f"checkpoint of partition {raw.get('partition')}, not {self.partition}")
        self.offset = int(raw["offset"])
        self._open.clear()
        self._ended.clear()
        for stream, (seq, ended, commands) in raw["streams"].items():
            head = StreamHead(int(seq), bool(ended))
            for cid, first, last, offsets in commands:
                positions = tuple(LogPosition(self.partition, int(o)) for o in offsets)
                head.commands[cid] = CommandRecord(int(first), int(last), positions)
            (self._ended if head.ended else self._open)[stream] = head
