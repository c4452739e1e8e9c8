"""The engine's configuration: read from the environment, and written back for another engine process."""

from __future__ import annotations

import pytest
from rummy_engine import config
from rummy_service.config import ConfigError


def test_a_configuration_written_as_environment_reads_back_the_same() -> None:
    env = {
        "MELDSTREAM_DEV": "1",  # the development secrets (test_secrets has production mode's rules)
        "KAFKA_BOOTSTRAP": "kafka:9092",
        "REDIS_URL": "redis://redis:6379/0",
        "ENGINE_PARTITIONS": "64",
        "ENGINE_STORE_TIMEOUT_MS": "2500",
        "ENGINE_ADVERTISED_ADDRESS": "10.0.0.7:50051",
    }
    loaded = config.load(env)
    assert (loaded.partitions, loaded.store_timeout_s, loaded.advertised) == (64, 2.5, "10.0.0.7:50051")
    assert config.load(loaded.to_env()) == loaded


@pytest.mark.parametrize(("name", "value"), [("ENGINE_PARTITIONS", "0"), ("ENGINE_STORE_TIMEOUT_MS", "x")])
def test_a_bad_number_is_refused_naming_the_variable(name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=name):
        config.load({"MELDSTREAM_DEV": "1", name: value})


def test_a_store_named_by_one_url_is_written_back_for_another_engine_process() -> None:
    """`meldstream run --engines N` starts engines from `to_env`: they open the store this one did, even
    in an environment whose MELDSTREAM_STORE names another."""
    loaded = config.load(
        {"MELDSTREAM_DEV": "1", "MELDSTREAM_STORE": "kafka://kafka:9092?redis=redis://redis:6379/0"}
    )
    assert (loaded.kafka, loaded.redis, loaded.store_setting) == (
        "kafka:9092",
        "redis://redis:6379/0",
        "MELDSTREAM_STORE",
    )
    inherited = {"MELDSTREAM_STORE": "sqlite:///elsewhere"}
    again = config.load({**inherited, **loaded.to_env()})
    assert again == loaded
    assert again.store == loaded.store


def test_disconnect_protection_is_on_from_the_environment_and_off_in_code() -> None:
    """An operator's engine keeps a dropped seat 30 s (docs/operators/configuration.md); 0 turns it off;
    a configuration built in code (tests, tools) tracks no presence unless asked."""
    dev = {"MELDSTREAM_DEV": "1"}
    assert config.load(dev).disconnect_grace_ms == config.DEFAULT_DISCONNECT_GRACE_MS == 30_000
    off = config.load({**dev, "ENGINE_DISCONNECT_GRACE_MS": "0", "ENGINE_TIME_BANK_MS": "45000"})
    assert (off.disconnect_grace_ms, off.time_bank_ms, off.forfeit_after_turns) == (0, 45_000, 3)
    assert config.EngineConfig().disconnect_grace_ms == 0
