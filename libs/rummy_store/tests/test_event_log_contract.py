"""One contract every EventLog backend passes: the embedded sqlite log, and Kafka with partition writers."""

from __future__ import annotations

import abc
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from rummy_store import (
    ConcurrencyError,
    EventLog,
    EventRecord,
    LogPosition,
    NewEvent,
    StoreError,
    Subscription,
)
from rummy_store.embedded_log import EmbeddedEventLog
from rummy_store.kafka_clients import BACKENDS
from rummy_store.kafka_log import KafkaEventLog

MakeLog = Callable[[], EventLog]


def events(*names: str) -> list[NewEvent]:
    return [NewEvent(name, f"payload:{name}".encode(), schema_version=2) for name in names]


def seqs(log: EventLog, game_id: str) -> list[int]:
    return [r.seq for r in log.read_stream(game_id)]


class EventLogContract(abc.ABC):
    """Behaviour both backends must share. Subclasses provide ``make_log``: every call opens another
    writer on the same underlying log (another process, as far as the backend can tell)."""

    @abc.abstractmethod
    def make_log(self, *args: object) -> MakeLog: ...

    @pytest.fixture
    def log(self, make_log: MakeLog) -> EventLog:
        return make_log()

    def test_append_then_read_stream_returns_events_in_order(self, log: EventLog) -> None:
        first = log.append("g1", "c1", 0, events("GameStarted", "CardDrawn"))
        second = log.append("g1", "c2", 2, events("CardDiscarded"))
        assert (first.first_seq, first.last_seq, second.first_seq, second.last_seq) == (1, 2, 3, 3)
        records = list(log.read_stream("g1"))
        assert [(r.seq, r.event_type, r.command_id) for r in records] == [
            (1, "GameStarted", "c1"),
            (2, "CardDrawn", "c1"),
            (3, "CardDiscarded", "c2"),
        ]
        assert [r.payload for r in records] == [
            b"payload:GameStarted",
            b"payload:CardDrawn",
            b"payload:CardDiscarded",
        ]
        assert {r.schema_version for r in records} == {2}
        assert [r.position for r in records] == [*first.positions, *second.positions]
        assert log.last_seq("g1") == 3
        assert log.last_seq("nobody") == 0

    def test_append_rejects_stale_expected_seq_and_changes_nothing(self, log: EventLog) -> None:
        log.append("g1", "c1", 0, events("GameStarted"))
        with pytest.raises(ConcurrencyError) as error:
            log.append("g1", "c2", 0, events("CardDrawn"))
        assert error.value.actual_seq == 1
        with pytest.raises(ConcurrencyError):
            log.append("g1", "c3", 5, events("CardDrawn"))
        assert seqs(log, "g1") == [1]

    def test_retried_command_id_is_appended_once(self, log: EventLog) -> None:
        first = log.append("g1", "c1", 0, events("GameStarted", "CardDrawn"))
        retry = log.append("g1", "c1", 0, events("GameStarted", "CardDrawn"))
        assert retry.duplicate and not first.duplicate
        assert (retry.first_seq, retry.last_seq, retry.positions) == (1, 2, first.positions)
        # the same command id in another game is another command
        assert not log.append("g2", "c1", 0, events("GameStarted")).duplicate
        assert seqs(log, "g1") == [1, 2]

    @pytest.mark.parametrize(
        ("game_id", "command_id", "expected_seq", "batch"),
        [
            ("", "c", 0, events("E")),
            ("g1", "", 0, events("E")),
            ("g1", "c", -1, events("E")),
            ("g1", "c", 0, []),
            ("g1", "c", 0, [NewEvent("", b"x")]),
            ("g1", "c", 0, [NewEvent("E", b"x", schema_version=0)]),
        ],
    )
    def test_bad_append_is_refused_and_changes_nothing(
        self, log: EventLog, game_id: str, command_id: str, expected_seq: int, batch: list[NewEvent]
    ) -> None:
        with pytest.raises(ValueError):
            log.append(game_id, command_id, expected_seq, batch)
        assert seqs(log, "g1") == []

    def test_a_game_lives_in_one_partition_in_offset_order(self, log: EventLog) -> None:
        for n in range(4):
            log.append("g1", f"c{n}", n, events(f"E{n}"))
        partition = log.partition_for("g1")
        records = list(log.read_stream("g1"))
        assert {r.position.partition for r in records} == {partition}
        offsets = [r.position.offset for r in records]
        assert offsets == sorted(offsets) and len(set(offsets)) == 4
        tail = list(log.read_partition(partition, offsets[2]))
        assert [(r.game_id, r.seq) for r in tail if r.game_id == "g1"] == [("g1", 3), ("g1", 4)]
        assert log.end_offset(partition) > offsets[-1]  # Kafka's transaction markers take offsets too
        with pytest.raises(ValueError):
            list(log.read_partition(log.partitions))

    def test_read_stream_from_seq_with_and_without_hint(self, log: EventLog) -> None:
        result = log.append("g1", "c1", 0, events("A", "B", "C", "D"))
        assert [r.seq for r in log.read_stream("g1", 3)] == [3, 4]
        assert [r.seq for r in log.read_stream("g1", 3, hint=result.positions[1])] == [3, 4]

    def test_read_streams_reads_each_game_from_its_own_start(self, log: EventLog) -> None:
        games = [f"g{n}" for n in range(7)]  # more games than partitions: some share one
        hints: dict[str, LogPosition] = {}
        for n in range(3):
            for game_id in games:
                written = log.append(game_id, f"c{n}", n * 2, events(f"A{n}", f"B{n}"))
                hints.setdefault(game_id, written.positions[0])  # at or before every wanted record
        wanted = {game_id: (1 + n % 6, hints[game_id] if n % 2 else None) for n, game_id in enumerate(games)}
        together = list(log.read_streams(wanted))
        for game_id, (from_seq, hint) in wanted.items():
            alone = [(r.seq, r.position) for r in log.read_stream(game_id, from_seq, hint)]
            assert [(r.seq, r.position) for r in together if r.game_id == game_id] == alone
            assert [seq for seq, _ in alone] == list(range(from_seq, 7))
        assert {r.game_id for r in together} <= set(games)

    def test_group_reads_from_start_then_resumes_after_commit(
        self, log: EventLog, unique_prefix: str
    ) -> None:
        log.append("g1", "c1", 0, events("A", "B"))
        log.append("g2", "c1", 0, events("A"))
        group = f"{unique_prefix}-group"
        with log.subscribe(group) as member:
            seen = poll_until(member, 3)
            member.commit()
        assert sorted((r.game_id, r.seq) for r in seen) == [("g1", 1), ("g1", 2), ("g2", 1)]
        log.append("g1", "c2", 2, events("C"))
        with log.subscribe(group) as member:
            assert [(r.game_id, r.seq) for r in poll_until(member, 1)] == [("g1", 3)]

    def test_racing_writers_leave_no_duplicate_and_no_gap(self, make_log: MakeLog) -> None:
        writers = [make_log(), make_log()]
        # On Kafka every turn of the race is a takeover (a new producer fences the other, then reads the
        # partition): a few seconds each on a loaded machine, so the race is short and its limit long.
        per_writer = 6
        retried: list[bool] = []

        def write(log: EventLog, name: str) -> None:
            done = 0
            deadline = time.monotonic() + 300
            while done < per_writer and time.monotonic() < deadline:
                command_id = f"{name}-{done}"
                try:
                    log.append("race", command_id, log.last_seq("race"), events(f"{name}{done}"))
                except StoreError:  # stale, fenced, or a fence reported as another failure: retry
                    time.sleep(0.001)
                    continue
                done += 1
                # a client that lost the answer retries the same command: it must not be appended again
                while time.monotonic() < deadline:
                    try:
                        retried.append(log.append("race", command_id, 0, events(f"{name}{done}")).duplicate)
                        break
                    except StoreError:  # the other writer took the partition meanwhile
                        time.sleep(0.001)

        threads = [threading.Thread(target=write, args=(w, f"w{i}")) for i, w in enumerate(writers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # Kafka answers a transaction's commit once the commit is decided, and writes its markers just
        # after: a read_committed reader may not see the last commit for a moment (CI met it once).
        deadline = time.monotonic() + 30
        records = list(writers[0].read_stream("race"))
        while len(records) < 2 * per_writer and time.monotonic() < deadline:
            time.sleep(0.1)
            records = list(writers[0].read_stream("race"))
        assert [r.seq for r in records] == list(range(1, 2 * per_writer + 1))
        assert len({r.command_id for r in records}) == 2 * per_writer
        assert retried == [True] * (2 * per_writer)
        assert {r.command_id.split("-")[0] for r in records} == {"w0", "w1"}


def poll_until(member: Subscription, count: int, timeout_s: float = 60) -> list[EventRecord]:
    records: list[EventRecord] = []
    deadline = time.monotonic() + timeout_s
    while len(records) < count and time.monotonic() < deadline:
        records.extend(member.poll(1.0))
    return records


class TestEmbeddedEventLog(EventLogContract):
    @pytest.fixture
    def make_log(self, tmp_path: Path) -> Iterator[MakeLog]:
        opened: list[EventLog] = []

        def make() -> EventLog:
            opened.append(EmbeddedEventLog(tmp_path / "events.sqlite", partitions=3))
            return opened[-1]

        yield make
        for log in opened:
            log.close()

    def test_reopening_with_other_partition_count_keeps_the_log_s_own(self, tmp_path: Path) -> None:
        with EmbeddedEventLog(tmp_path / "e.sqlite", partitions=3) as created:
            created.append("g", "c", 0, [NewEvent("e", b"x")])
        with EmbeddedEventLog(tmp_path / "e.sqlite", partitions=64) as reopened:
            assert reopened.partitions == 3  # game -> partition stays what it was
            assert [r.seq for r in reopened.read_stream("g")] == [1]


@pytest.mark.integration
@pytest.mark.parametrize("client", BACKENDS)
class TestKafkaEventLog(EventLogContract):
    @pytest.fixture
    def make_log(self, kafka_bootstrap: str, unique_prefix: str, client: str) -> Iterator[MakeLog]:
        opened: list[EventLog] = []
        topic = f"{unique_prefix}.rummy.game.events.v1"

        def make() -> EventLog:  # claims a partition on its first append to it, fencing the others
            opened.append(KafkaEventLog(kafka_bootstrap, topic, partitions=3, writer=True, client=client))
            return opened[-1]

        yield make
        for log in opened:
            log.close()
