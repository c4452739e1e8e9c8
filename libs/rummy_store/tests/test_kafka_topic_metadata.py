"""A KafkaEventLog constructed, and a group joined, the moment their topic is created see every partition
(no `partitions set()`, no member assigned nothing); a topic of another size is refused naming it."""

from __future__ import annotations

import time

import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic
from rummy_store import NewEvent
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.publisher import KafkaPublisher

pytestmark = pytest.mark.integration


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


def test_a_topic_of_another_size_is_refused_naming_it_and_the_bootstrap(
    kafka_bootstrap: str, unique_prefix: str
) -> None:
    topic = f"{unique_prefix}.events"
    KafkaEventLog(kafka_bootstrap, topic, 3).close()
    with pytest.raises(ValueError, match=rf"topic {topic} at {kafka_bootstrap} has partitions \[0, 1, 2\]"):
        KafkaEventLog(kafka_bootstrap, topic, 2)
