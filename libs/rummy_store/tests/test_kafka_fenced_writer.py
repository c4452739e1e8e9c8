"""The single-writer rule on Kafka: a fence group's writer is fenced by the broker, and the log decides.

A writer claims a fence group (one partition, or several: the last tests) with a transactional
producer whose id is the group's: a newer claim fences the older one at the broker, and readers read
committed records only. So a paused or stale
writer's records never count, whatever it does when it resumes; a writer that dies after committing
leaves its commands to be recognised by the next one; a checkpoint lets a new owner read only the tail.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping

import pytest
import redis
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka import errors as kafka_errors
from rummy_infra.reading import read_until
from rummy_store import AppendResult, NewEvent, NotWriterError, StoreError
from rummy_store.checkpoints import RedisCheckpoints
from rummy_store.fence_groups import control_topic
from rummy_store.fenced_writer import FencedWriter
from rummy_store.kafka_clients import BACKENDS
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.kafka_records import Skipped, headers
from rummy_store.records import Append, EventRecord

pytestmark = pytest.mark.integration


@pytest.fixture
def topic(unique_prefix: str) -> str:
    return f"{unique_prefix}.rummy.game.events.v1"


def owner(kafka_bootstrap: str, topic: str, **kwargs: object) -> KafkaEventLog:
    """A writer that appends only to the partitions it claimed, as an engine does."""
    return KafkaEventLog(kafka_bootstrap, topic, 3, writer=True, claim_on_demand=False, **kwargs)  # type: ignore[arg-type]


def one(name: str) -> list[NewEvent]:
    return [NewEvent(name, name.encode())]


def history(log: KafkaEventLog, game_id: str) -> list[tuple[int, str]]:
    return [(r.seq, r.command_id) for r in log.read_stream(game_id)]


def seqs_up_to(log: KafkaEventLog, game_id: str, last: int) -> list[int]:
    """The stream's sequence numbers, read again until `last` shows (`read_until`)."""
    return read_until(lambda: [r.seq for r in log.read_stream(game_id)], lambda seqs: last in seqs, 10)


def test_records_are_keyed_by_game_with_type_and_version_headers(kafka_bootstrap: str, topic: str) -> None:
    with KafkaEventLog(kafka_bootstrap, topic, 3, writer=True) as log:
        result = log.append("g1", "c1", 0, [NewEvent("GameCreated", b"envelope", schema_version=3)])
    (position,) = result.positions
    consumer = KafkaConsumer(bootstrap_servers=kafka_bootstrap, enable_auto_commit=False)
    tp = TopicPartition(topic, position.partition)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    messages: list[object] = []
    while not messages:
        messages = consumer.poll(timeout_ms=1_000).get(tp, [])
    consumer.close()
    message = messages[0]
    assert message.key == b"g1" and message.value == b"envelope"  # type: ignore[attr-defined]
    assert dict(message.headers) == {  # type: ignore[attr-defined]
        "event-type": b"GameCreated",
        "schema-version": b"3",
        "seq": b"1",
        "command-id": b"c1",
    }


def test_a_new_owner_fences_the_old_one_which_writes_nothing_after(kafka_bootstrap: str, topic: str) -> None:
    with owner(kafka_bootstrap, topic) as old, owner(kafka_bootstrap, topic) as new:
        partition = old.partition_for("g1")
        with pytest.raises(NotWriterError):  # nobody appends to a partition it has not claimed
            old.append("g1", "c0", 0, one("E0"))
        old.claim([partition])
        old.append("g1", "c1", 0, one("E1"))
        new.claim([partition])  # the old owner was paused past its session: the group moved the partition
        new.append("g1", "c2", 1, one("E2"))
        with pytest.raises(NotWriterError):  # the old owner resumes and tries to write: refused
            old.append("g1", "c3", 1, one("E3"))
        assert old.owned == set() and new.owned == {partition}
        assert history(new, "g1") == [(1, "c1"), (2, "c2")]


def test_partitions_claimed_together_fence_each_old_owner(kafka_bootstrap: str, topic: str) -> None:
    with owner(kafka_bootstrap, topic) as old, owner(kafka_bootstrap, topic) as new:
        assert old.claim_each(range(3)) == {} and old.owned == {0, 1, 2}
        old.append("g1", "c1", 0, one("E1"))
        failed = new.claim_each([0, 1, 2, 3])  # 3 is no partition of the topic: reported, not raised
        assert list(failed) == [3] and isinstance(failed[3], ValueError)
        assert new.owned == {0, 1, 2}
        with pytest.raises(NotWriterError):  # each partition has its own producer, fenced as before
            old.append("g1", "c2", 1, one("E2"))
        new.append("g1", "c2", 1, one("E2"))
        assert history(new, "g1") == [(1, "c1"), (2, "c2")]


@pytest.mark.parametrize("client", BACKENDS)
def test_a_paused_writers_open_transaction_never_counts(
    kafka_bootstrap: str, topic: str, client: str
) -> None:
    """The split brain of the reserve-produce window: the old owner had sent its records and was paused
    before committing; clients failed over to the new owner (on either backend) with the same command id."""
    with owner(kafka_bootstrap, topic, client=client) as new:
        partition = new.partition_for("g1")
        new.claim([partition])
        new.append("g1", "c1", 0, one("E1"))
        new.drop([partition])
        # The old owner: its producer (same transactional id) sent seq 2 for command c2 and stopped.
        paused = KafkaProducer(
            bootstrap_servers=kafka_bootstrap, transactional_id=new.fences.transactional_id(partition)
        )
        paused.init_transactions()
        paused.begin_transaction()
        paused.send(
            topic, key=b"g1", value=b"stale", partition=partition, headers=headers(one("E2")[0], 2, "c2")
        )
        paused.flush()
        new.claim([partition])  # fences the paused producer and aborts its transaction
        new.append("g1", "c2", 1, one("E2"))  # the client's failover: the same command, once
        new.append("g1", "c3", 2, one("E3"))
        with pytest.raises((kafka_errors.ProducerFencedError, kafka_errors.InvalidProducerEpochError)):
            paused.commit_transaction()  # it resumes: the broker refuses
        paused.close(timeout=5)
        assert history(new, "g1") == [(1, "c1"), (2, "c2"), (3, "c3")]
        assert [r.payload for r in new.read_stream("g1")] == [b"E1", b"E2", b"E3"]


def test_a_writer_that_died_after_committing_leaves_its_commands_known(
    kafka_bootstrap: str, topic: str
) -> None:
    with owner(kafka_bootstrap, topic) as first:
        partition = first.partition_for("g1")
        first.claim([partition])
        first.append("g1", "c1", 0, one("E1"))
        first.append("g1", "c2", 1, one("E2"))
    with owner(kafka_bootstrap, topic) as second:  # another process, nothing in memory
        second.claim([partition])
        retry = second.append("g1", "c2", 1, one("E2"))  # the answer was lost: the client retries
        assert retry.duplicate and (retry.first_seq, retry.last_seq) == (2, 2)
        assert second.last_seq("g1") == 2
        second.append("g1", "c3", 2, one("E3"))
        assert history(second, "g1") == [(1, "c1"), (2, "c2"), (3, "c3")]


def test_a_new_owner_starts_from_the_checkpoint_and_reads_the_tail(
    kafka_bootstrap: str, topic: str, redis_url: str, unique_prefix: str
) -> None:
    client = redis.Redis.from_url(redis_url)
    checkpoints = RedisCheckpoints(client, f"{unique_prefix}:")
    try:
        with owner(kafka_bootstrap, topic, checkpoints=checkpoints) as first:
            partition = first.partition_for("g1")
            first.claim([partition])
            for n in range(5):
                first.append("g1", f"c{n}", n, one(f"E{n}"))
        # closing saved a checkpoint at the partition's end; one more record lands after it
        with KafkaEventLog(kafka_bootstrap, topic, 3, writer=True) as other:
            other.append("g1", "c5", 5, one("E5"))
        saved = checkpoints.load(f"{topic}:{partition}")
        assert saved is not None
        with owner(kafka_bootstrap, topic, checkpoints=checkpoints) as second:
            second.claim([partition])
            index = second.index(partition)
            assert index is not None and index.open_streams == ["g1"]
            head = index.head("g1")
            assert head is not None and head.seq == 6  # the checkpoint's 5, then the tail's 6th
            assert second.append("g1", "c4", 4, one("E4")).duplicate
            second.append("g1", "c6", 6, one("E6"))
            assert seqs_up_to(second, "g1", 7) == list(range(1, 8))
    finally:
        client.close()


@pytest.mark.parametrize("kafka_client", BACKENDS)
def test_a_failed_batch_reads_again_from_the_commit_in_doubt_not_from_the_start(
    kafka_bootstrap: str, topic: str, redis_url: str, unique_prefix: str, kafka_client: str
) -> None:
    """After a failed batch only the last commit is in doubt: the next claim reads from it, not the
    partition's whole history, and no checkpoint holds it until a later commit makes it certain."""
    client = redis.Redis.from_url(redis_url)
    checkpoints = RedisCheckpoints(client, f"{unique_prefix}:")
    reads: list[dict[int, int]] = []
    with KafkaEventLog(kafka_bootstrap, topic, 3, client=kafka_client) as log:

        def reader(starts: Mapping[int, int]) -> Iterator[EventRecord]:
            reads.append(dict(starts))  # the real reads, counted
            return log.read_partitions(starts)

        partition = log.partition_for("g1")
        group = log.fences.group_of(partition)
        writer = FencedWriter(
            kafka_bootstrap, log.fences, group, reader, checkpoints, backend=log.backend, checkpoint_every_s=0
        )
        try:
            writer.claim()
            for n in range(20):  # history before the commit in doubt
                assert isinstance(writer.commit([Append("g1", f"c{n}", n, one(f"E{n}"))])[0], AppendResult)
            (doubted,) = writer.commit([Append("g1", "c20", 20, one("E20"))])
            assert isinstance(doubted, AppendResult)
            (offset_in_doubt,) = (position.offset for position in doubted.positions)
            saved = json.loads(checkpoints.load(f"{topic}:{partition}") or b"{}")
            before = saved["offset"]  # c19's commit marker, just before c20's record
            assert before == offset_in_doubt - 1 and saved["streams"]["g1"][0] == 20  # not c20 yet

            too_big = [NewEvent("E21", b"x" * 2_000_000)]  # over the producer's max.request.size
            (failed,) = writer.commit([Append("g1", "c21", 21, too_big)])
            assert isinstance(failed, StoreError) and "batch failed" in str(failed)

            reads.clear()
            (retried,) = writer.commit([Append("g1", "c20", 20, one("E20"))])  # its answer was lost
            assert isinstance(retried, AppendResult) and retried.duplicate  # the log kept it
            assert reads == [{partition: before}]  # one read, from the commit in doubt
            (next_one,) = writer.commit([Append("g1", "c21", 21, one("E21"))])
            assert isinstance(next_one, AppendResult) and next_one.first_seq == 22
        finally:
            writer.close()
        assert seqs_up_to(log, "g1", 22) == list(range(1, 23))
    client.close()


def test_an_unreadable_record_is_skipped_by_readers_and_writers(kafka_bootstrap: str, topic: str) -> None:
    with owner(kafka_bootstrap, topic) as log:
        partition = log.partition_for("g1")
        log.claim([partition])
        log.append("g1", "c1", 0, one("E1"))
        raw = KafkaProducer(bootstrap_servers=kafka_bootstrap)
        raw.send(topic, value=b"no key, no headers", partition=partition).get(timeout=30)
        raw.send(topic, key=b"g1", value=b"no headers", partition=partition).get(timeout=30)
        raw.close()
        before = Skipped.count
        assert history(log, "g1") == [(1, "c1")]
        assert Skipped.count == before + 2
        log.drop([partition])
        log.claim([partition])  # a new owner folds past them
        log.append("g1", "c2", 1, one("E2"))
        assert history(log, "g1") == [(1, "c1"), (2, "c2")]


def grouped(kafka_bootstrap: str, topic: str, groups: int | None) -> KafkaEventLog:
    """An engine's writer: 4 partitions in `groups` fence groups (None: follow the topic's)."""
    return KafkaEventLog(kafka_bootstrap, topic, 4, writer=True, claim_on_demand=False, fence_groups=groups)


def games_in(log: KafkaEventLog, partitions: list[int]) -> list[str]:
    """One game id in each of `partitions`."""
    return [next(g for n in range(10_000) if log.partition_for(g := f"g{n}") == p) for p in partitions]


def test_one_transaction_spans_a_fence_groups_partitions(kafka_bootstrap: str, topic: str) -> None:
    with grouped(kafka_bootstrap, topic, 2) as log:
        assert log.fences.groups == 2 and log.fences.ownership_topic == control_topic(topic)
        assert log.fences.partitions_of(0) == (0, 2) and log.fences.partitions_of(1) == (1, 3)
        a, b, c = games_in(log, [0, 2, 1])
        assert log.commit_unit(a) == log.commit_unit(b) == 0 and log.commit_unit(c) == 1
        log.claim([0])
        answers = log.append_batch([Append(a, "ca", 0, one("A")), Append(b, "cb", 0, one("B"))])
        assert all(isinstance(r, AppendResult) for r in answers)
        assert [p.partition for r in answers for p in r.positions] == [0, 2]  # type: ignore[union-attr]
        with pytest.raises(NotWriterError):  # group 1 is not claimed
            log.append(c, "cc", 0, one("C"))
        assert history(log, a) == [(1, "ca")] and history(log, b) == [(1, "cb")]


def test_a_writer_follows_the_topics_fence_groups_and_fences_a_whole_group(
    kafka_bootstrap: str, topic: str
) -> None:
    with grouped(kafka_bootstrap, topic, 2) as old:
        a, b = games_in(old, [0, 2])
        old.claim([0])
        old.append(a, "c1", 0, one("E1"))
        # Another writer configured otherwise (or not at all) uses the topic's groups: its ids match.
        with grouped(kafka_bootstrap, topic, 3) as new, grouped(kafka_bootstrap, topic, None) as tool:
            assert new.fences == old.fences and tool.fences == old.fences
            new.claim([0])
            for game, seq in ((a, 1), (b, 0)):  # both partitions of the group moved with the one claim
                with pytest.raises(NotWriterError):
                    old.append(game, "c2", seq, one("E2"))
            new.append(b, "c2", 0, one("E2"))
            assert old.owned == set() and new.owned == {0}
            assert history(new, a) == [(1, "c1")] and history(new, b) == [(1, "c2")]
