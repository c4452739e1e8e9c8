"""A service's store from the environment: MELDSTREAM_STORE, or the settings it stands for (KAFKA_BOOTSTRAP
and REDIS_URL, or neither for the service's data directory), never both; and what it needs at start,
named by the setting that set it."""

from __future__ import annotations

import pytest
from rummy_service.config import ConfigError, store_location
from rummy_service.preflight import store_needs
from rummy_store.locations import StoreLocation

KAFKA = {"KAFKA_BOOTSTRAP": "k1:9092,k2:9092", "REDIS_URL": "redis://r:6379/0"}


def test_the_separate_settings_and_the_one_url_name_the_same_store() -> None:
    separate = store_location("ENGINE_DATA_DIR", ".local/engine", KAFKA)
    one = store_location(
        "ENGINE_DATA_DIR",
        ".local/engine",
        {"MELDSTREAM_STORE": "kafka://k1:9092,k2:9092?redis=redis://r:6379/0"},
    )
    assert (
        (separate.kafka, separate.redis) == (one.kafka, one.redis) == ("k1:9092,k2:9092", "redis://r:6379/0")
    )
    assert not separate.embedded and not one.embedded
    assert (separate.setting, one.setting) == ("", "MELDSTREAM_STORE")


def test_the_kafka_backend_is_the_urls_scheme_or_kafka_client() -> None:
    rdkafka = {"MELDSTREAM_STORE": "kafka+rdkafka://k1:9092?redis=redis://r:6379/0"}
    assert store_location("ENGINE_DATA_DIR", ".local/engine", rdkafka).client == "rdkafka"
    assert store_location("ENGINE_DATA_DIR", ".local/engine", KAFKA).client == "kafka-python"
    separate = store_location("ENGINE_DATA_DIR", ".local/engine", KAFKA | {"KAFKA_CLIENT": "rdkafka"})
    assert separate.client == "rdkafka" and separate.open().kafka_client == "rdkafka"  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match=r"^KAFKA_CLIENT='java' is not one of kafka-python, rdkafka$"):
        store_location("ENGINE_DATA_DIR", ".local/engine", KAFKA | {"KAFKA_CLIENT": "java"})


def test_neither_setting_is_the_embedded_store_in_the_services_directory() -> None:
    assert store_location("SCORING_DATA_DIR", ".local/scoring", {}) == StoreLocation(
        directory=".local/scoring"
    )
    assert (
        store_location("SCORING_DATA_DIR", ".local/scoring", {"SCORING_DATA_DIR": "/data"}).directory
        == "/data"
    )
    assert store_location(
        "SCORING_DATA_DIR", ".local/scoring", {"MELDSTREAM_STORE": "sqlite:////data"}
    ).directory == ("/data")


@pytest.mark.parametrize("other", ["KAFKA_BOOTSTRAP", "KAFKA_CLIENT", "REDIS_URL", "ENGINE_DATA_DIR"])
def test_the_one_url_beside_a_setting_it_stands_for_is_refused(other: str) -> None:
    env = {"MELDSTREAM_STORE": "sqlite:///data", other: "redis://r:6379/0"}
    with pytest.raises(ConfigError) as refused:
        store_location("ENGINE_DATA_DIR", ".local/engine", env)
    assert str(refused.value) == (
        f"MELDSTREAM_STORE and {other} are both set: MELDSTREAM_STORE names the whole store, so unset {other}"
    )


def test_a_bad_url_is_a_configuration_error_naming_the_variable() -> None:
    with pytest.raises(ConfigError, match=r"^MELDSTREAM_STORE='redis://r:6379/0' is not a store location"):
        store_location("ENGINE_DATA_DIR", ".local/engine", {"MELDSTREAM_STORE": "redis://r:6379/0"})


def test_kafka_without_redis_is_refused_unless_the_service_runs_without_it() -> None:
    with pytest.raises(ConfigError, match="set both KAFKA_BOOTSTRAP and REDIS_URL, or neither"):
        store_location("ENGINE_DATA_DIR", ".local/engine", {"KAFKA_BOOTSTRAP": "k:9092"})
    with pytest.raises(ConfigError, match="names no Redis"):
        store_location("ENGINE_DATA_DIR", ".local/engine", {"MELDSTREAM_STORE": "kafka://k:9092"})
    for env in ({"KAFKA_BOOTSTRAP": "k:9092"}, {"MELDSTREAM_STORE": "kafka://k:9092"}):
        alone = store_location("MATCHMAKING_DATA_DIR", ".local/matchmaking", env, redis_required=False)
        assert (alone.kafka, alone.redis) == ("k:9092", "")


def test_what_a_store_needs_is_named_by_the_setting_that_set_it() -> None:
    separate = store_needs(store_location("ENGINE_DATA_DIR", ".local/engine", {}), "ENGINE_DATA_DIR", 15)
    assert separate.data_dirs == (("ENGINE_DATA_DIR", ".local/engine"),)
    one = store_needs(
        store_location("ENGINE_DATA_DIR", ".local/engine", {"MELDSTREAM_STORE": "sqlite:///d"}),
        "ENGINE_DATA_DIR",
        15,
    )
    assert one.data_dirs == (("MELDSTREAM_STORE", "d"),)
    kafka = store_needs(store_location("ENGINE_DATA_DIR", "", KAFKA), "ENGINE_DATA_DIR", 15)
    assert (kafka.kafka_setting, kafka.redis_setting, kafka.data_dirs) == ("KAFKA_BOOTSTRAP", "REDIS_URL", ())
    url = {"MELDSTREAM_STORE": "kafka://k:9092?redis=redis://r:6379/0"}
    kafka = store_needs(store_location("ENGINE_DATA_DIR", "", url), "ENGINE_DATA_DIR", 15)
    assert (kafka.kafka, kafka.redis) == ("k:9092", "redis://r:6379/0")
    assert (kafka.kafka_setting, kafka.redis_setting) == ("MELDSTREAM_STORE", "MELDSTREAM_STORE")
