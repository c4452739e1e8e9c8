"""A commit in doubt is undone exactly: `rollback` restores the heads and offset its savepoint saw, for
streams it had seen, streams it had not, and a stream the commit ended; a checkpoint written `before`
the savepoint is the index as it was then."""

from __future__ import annotations

import json
from typing import Any

from rummy_store.partition_index import PartitionIndex
from rummy_store.records import LogPosition


def add(index: PartitionIndex, stream: str, seq: int, offset: int, event_type: str = "e") -> None:
    index.add(stream, seq, f"{stream}-c{seq}", event_type, LogPosition(index.partition, offset))


def state(index: PartitionIndex, **kwargs: Any) -> Any:
    return json.loads(index.dumps(**kwargs))  # streams in any order


def test_a_rollback_undoes_one_commit_on_old_new_and_ended_streams() -> None:
    index = PartitionIndex(2)
    add(index, "a", 1, 0)
    add(index, "b", 1, 1)
    add(index, "b", 2, 2)
    before = state(index)
    point = index.savepoint(["a", "b", "new"])
    add(index, "a", 2, 4)  # the commit in doubt: a moves on, b ends, a new stream starts
    add(index, "b", 3, 5, "game_ended")
    add(index, "new", 1, 6)
    assert index.offset == 7 and index.open_streams == ["a", "new"]
    assert state(index, before=point) == before  # the checkpoint written meanwhile leaves it out
    index.rollback(point)
    assert state(index) == before and index.offset == 3 and index.open_streams == ["a", "b"]
    head = index.head("a")
    assert head is not None and head.seq == 1 and list(head.commands) == ["a-c1"]
    assert index.head("new") is None
    add(index, "a", 2, 4)  # the log kept the commit: folding it again gives the same index
    add(index, "b", 3, 5, "game_ended")
    add(index, "new", 1, 6)
    ended = index.head("b")
    assert index.open_streams == ["a", "new"] and ended is not None and ended.ended


def test_a_savepoint_is_not_changed_by_what_is_added_after_it() -> None:
    index = PartitionIndex(0)
    add(index, "a", 1, 0)
    point = index.savepoint(["a"])
    add(index, "a", 2, 1)
    index.rollback(point)
    add(index, "a", 2, 1)
    index.rollback(point)  # the saved head was copied in, not shared: still seq 1
    head = index.head("a")
    assert head is not None and head.seq == 1 and list(head.commands) == ["a-c1"]
