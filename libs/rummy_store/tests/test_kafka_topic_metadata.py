"""A KafkaEventLog constructed, and a group joined, the moment their topic is created see every partition
(no `partitions set()`, no member assigned nothing); a topic of another size is used with its own count,
by readers and writers alike, so a game's partition follows the topic."""

from __future__ import annotations

import logging
import time

import pytest
from kafka import KafkaAdminClient
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from rummy_store import NewEvent, StoreError
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.kafka_topic import Replication
from rummy_store.partitioning import partition_for
from rummy_store.publisher import KafkaPublisher


@pytest.mark.integration
def test_a_log_and_a_group_on_a_topic_created_an_instant_before_see_its_partitions(
    kafka_bootstrap: str, unique_prefix: str
) -> None:
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    try:
        for i in range(3):  # the empty answer came only sometimes: several fresh topics
            topic = f"{unique_prefix}.{i}"
            admin.create_topics([NewTopic(topic, 3, 1)], timeout_ms=0)  # answered before it settles
            log = KafkaEventLog(kafka_bootstrap, topic, 3)
            publisher = KafkaPublisher(kafka_bootstrap, topic, 3)
            try:
                assert [log.end_offset(p) for p in range(3)] == [0, 0, 0]
                with log.subscribe(f"{topic}.group") as member:
                    publisher.publish(f"g{i}", "c", 1, [NewEvent("e", b"x")])
                    deadline = time.monotonic() + 20  # a member assigned nothing waits for minutes
                    seen: list[str] = []
                    while not seen and time.monotonic() < deadline:
                        seen = [r.game_id for r in member.poll(0.5)]
                    assert seen == [f"g{i}"]
            finally:
                publisher.close()
                log.close()
    finally:
        admin.close()


@pytest.mark.integration
def test_a_topic_of_another_size_keeps_its_count_for_readers_and_writers(
    kafka_bootstrap: str, unique_prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    topic = f"{unique_prefix}.events"
    KafkaEventLog(kafka_bootstrap, topic, 3).close()  # an old topic, or one an operator created
    with caplog.at_level(logging.WARNING, "rummy_store"):
        publisher = KafkaPublisher(kafka_bootstrap, topic, 64)
        log = KafkaEventLog(kafka_bootstrap, topic, 64)
    try:
        assert (log.partitions, log.partition_for("g7")) == (3, partition_for("g7", 3))
        assert f"topic {topic} at {kafka_bootstrap} has 3 partitions, not the 64 configured" in caplog.text
        publisher.publish("g7", "c", 1, [NewEvent("e", b"x")])
        assert [(r.seq, r.position.partition) for r in log.read_stream("g7")] == [(1, partition_for("g7", 3))]
    finally:
        publisher.close()
        log.close()


@pytest.mark.integration
def test_topics_are_created_keeping_every_record_and_an_expiring_one_is_named(
    kafka_bootstrap: str, unique_prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    created, expiring = f"{unique_prefix}.kept", f"{unique_prefix}.expiring"
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    try:
        KafkaEventLog(kafka_bootstrap, created, 3).close()
        admin.create_topics([NewTopic(expiring, 3, 1)])  # an operator's, with the broker's default week
        with caplog.at_level(logging.WARNING, "rummy_store"):
            KafkaEventLog(kafka_bootstrap, expiring, 3).close()
            KafkaEventLog(kafka_bootstrap, created, 3).close()
        asked = [ConfigResource(ConfigResourceType.TOPIC, created, {"retention.ms": None})]
        retention = admin.describe_configs(asked)["topic"][created]["retention.ms"]["value"]
    finally:
        admin.close()
    assert retention == "-1"
    assert f"topic {expiring} deletes records older than 168 hours" in caplog.text
    assert "--entity-name " + expiring + " --add-config retention.ms=-1" in caplog.text
    assert created not in caplog.text


def test_replication_comes_from_the_cluster_unless_set() -> None:
    assert Replication().resolve(1) == (1, 1)
    assert Replication().resolve(2) == (2, 1)
    assert Replication().resolve(5) == (3, 2)  # one broker down, acks=all still reaches two
    assert Replication(factor=5, min_insync=3).resolve(5) == (5, 3)
    with pytest.raises(StoreError, match=r"min\.insync\.replicas 3 is above the replication factor 2"):
        Replication(factor=2, min_insync=3).resolve(3)
