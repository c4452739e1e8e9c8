"""The topic settings every service reads alike: KAFKA_REPLICATION_FACTOR and KAFKA_MIN_INSYNC_REPLICAS."""

from __future__ import annotations

import pytest
from rummy_service.config import ConfigError, kafka_replication
from rummy_store.kafka_topic import Replication


def test_unset_means_from_the_cluster_and_set_is_taken_as_given() -> None:
    assert kafka_replication({}) == Replication(0, 0)  # resolved at creation from the cluster's size
    env = {"KAFKA_REPLICATION_FACTOR": "3", "KAFKA_MIN_INSYNC_REPLICAS": "2"}
    assert kafka_replication(env) == Replication(3, 2)


def test_a_min_isr_above_the_replication_factor_is_refused_naming_both() -> None:
    env = {"KAFKA_REPLICATION_FACTOR": "2", "KAFKA_MIN_INSYNC_REPLICAS": "3"}
    with pytest.raises(ConfigError, match="KAFKA_MIN_INSYNC_REPLICAS=3 is above KAFKA_REPLICATION_FACTOR=2"):
        kafka_replication(env)
