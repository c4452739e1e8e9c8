"""A KafkaEventLog constructed the moment its topic is created sees every partition (no `partitions
set()`), and a topic of another size is refused with the topic and the bootstrap named."""

from __future__ import annotations

import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic
from rummy_store.kafka_log import KafkaEventLog

pytestmark = pytest.mark.integration


def test_a_log_on_a_topic_created_an_instant_before_sees_its_partitions(
    kafka_bootstrap: str, unique_prefix: str
) -> None:
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    try:
        for i in range(5):  # the empty answer came only sometimes: several fresh topics
            topic = f"{unique_prefix}.{i}"
            admin.create_topics([NewTopic(topic, 3, 1)], timeout_ms=0)  # answered before it settles
            log = KafkaEventLog(kafka_bootstrap, topic, 3)
            try:
                assert [log.end_offset(p) for p in range(3)] == [0, 0, 0]
            finally:
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
