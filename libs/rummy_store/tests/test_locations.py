"""The store factory: a location parsed from its URL, each mistake in one line, and what it opens on
each kind (sqlite files in a directory; Kafka with a real broker and Redis beside it)."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from redis import Redis
from rummy_store import LogPosition, NewEvent, Snapshot
from rummy_store.embedded_log import EmbeddedEventLog
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.locations import KAFKA_TIMEOUT_S, LocationError, StoreLocation, redacted
from rummy_store.sqlite_kv import SqliteKV

SETTING = "MELDSTREAM_STORE"
FORMS = "write sqlite:///DIR or kafka://HOST:PORT?redis=redis://HOST:6379/0"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("sqlite:///.local/platform", StoreLocation(directory=".local/platform")),
        ("sqlite:////var/lib/meldstream", StoreLocation(directory="/var/lib/meldstream")),
        (
            "kafka://k1:9092,k2:9092?redis=redis://r:6379/0",
            StoreLocation(kafka="k1:9092,k2:9092", redis="redis://r:6379/0"),
        ),
        (  # the same store through confluent-kafka (librdkafka)
            "kafka+rdkafka://k1:9092?redis=redis://r:6379/0",
            StoreLocation(kafka="k1:9092", redis="redis://r:6379/0", client="rdkafka"),
        ),
        (  # the Redis URL as written: its password and its own query are not split
            "kafka://[::1]:9092?redis=rediss://:p&ss=w@r:6380/1?ssl_cert_reqs=none",
            StoreLocation(kafka="[::1]:9092", redis="rediss://:p&ss=w@r:6380/1?ssl_cert_reqs=none"),
        ),
    ],
)
def test_a_location_is_parsed_from_its_url(url: str, expected: StoreLocation) -> None:
    location = StoreLocation.parse(url, SETTING)
    assert location == expected
    assert location.setting == SETTING
    assert location.embedded == (not expected.kafka)


def test_kafka_alone_is_a_location_where_redis_is_not_required() -> None:
    assert StoreLocation.parse("kafka://k:9092", SETTING, redis_required=False) == StoreLocation(
        kafka="k:9092"
    )


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "postgres://db/x",
            f"{SETTING}='postgres://db/x' is not a store location (unknown scheme 'postgres'): {FORMS}",
        ),
        ("/data/meldstream", f"{SETTING}='/data/meldstream' is not a store location: {FORMS}"),
        (
            "kafka://k:9092",
            f"{SETTING}='kafka://k:9092' names no Redis: Kafka needs one beside it, e.g. "
            "kafka://k:9092?redis=redis://HOST:6379/0",
        ),
        (
            "kafka://k:9092?redis=r:6379",
            f"{SETTING}='kafka://k:9092?redis=r:6379': its redis= is not a Redis URL (e.g. redis://HOST:6379/0)",
        ),
        (
            "kafka://k:9092?cache=redis://r:6379/0",
            f"{SETTING}='kafka://k:9092?cache=redis://r:6379/0': 'cache' is not a parameter of a Kafka store "
            "(only redis=URL)",
        ),
        (
            "kafka://k1:9092,k2?redis=redis://r:6379/0",
            f"{SETTING}='kafka://k1:9092,k2?redis=redis://r:6379/0': 'k2' is not a Kafka server HOST:PORT "
            "(e.g. kafka:9092)",
        ),
        (
            "sqlite://data",
            f"{SETTING}='sqlite://data' names a host: write sqlite:///DIR (relative) or "
            "sqlite:////DIR (absolute)",
        ),
        (
            "sqlite:///",
            f"{SETTING}='sqlite:///' names no directory: write sqlite:///DIR (relative) or sqlite:////DIR",
        ),
        (
            "sqlite:///data?mode=ro",
            f"{SETTING}='sqlite:///data?mode=ro': the embedded store takes no parameters, only sqlite:///DIR",
        ),
    ],
)
def test_a_location_that_names_no_store_is_one_line_saying_what_to_write(url: str, message: str) -> None:
    with pytest.raises(LocationError) as refused:
        StoreLocation.parse(url, SETTING)
    assert str(refused.value) == message


def test_a_redis_password_is_not_repeated_in_a_refusal() -> None:
    with pytest.raises(LocationError) as refused:
        StoreLocation.parse("kafka://k?redis=redis://admin:hunter2@r:6379/0", "--store")
    assert str(refused.value).startswith("--store='kafka://k?redis=redis://admin:***@r:6379/0': 'k' is not")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:hunter2@r:6379/0", "redis://:***@r:6379/0"),  # the engine's start line shows this
        ("rediss://admin:hunter2@r", "rediss://admin:***@r"),
        ("kafka://k:9092?redis=redis://:hunter2@r:6379/0", "kafka://k:9092?redis=redis://:***@r:6379/0"),
        ("redis://r:6379/0", "redis://r:6379/0"),
        ("kafka://k:9092?redis=redis://r", "kafka://k:9092?redis=redis://r"),
    ],
)
def test_a_redis_password_is_never_shown(url: str, shown: str) -> None:
    assert redacted(url) == shown


def test_kafka_logs_opened_here_keep_kafka_event_logs_own_bound() -> None:
    """The factory's default bound is KafkaEventLog's: opening a log here changes nothing about it."""
    assert inspect.signature(KafkaEventLog).parameters["timeout_s"].default == KAFKA_TIMEOUT_S


def test_the_embedded_store_opens_sqlite_files_in_its_directory(tmp_path: Path) -> None:
    directory = tmp_path / "not" / "made" / "yet"
    store = StoreLocation.parse(f"sqlite:///{directory}", SETTING).open()
    with store.log("rummy.game.events.v1", "events.sqlite", 3, writer=True) as log:
        assert isinstance(log, EmbeddedEventLog)
        log.append("g1", "c1", 0, [NewEvent("game_started", b"x")])
    with EmbeddedEventLog(directory / "events.sqlite", 3) as again:  # in the directory, by its file name
        assert [r.event_type for r in again.read_stream("g1")] == ["game_started"]

    elsewhere = tmp_path / "engine" / "events.sqlite"  # another service's file, by its path
    with store.log("ignored.topic", elsewhere, 3) as other:
        assert other.last_seq("g1") == 0
    assert elsewhere.exists()

    publisher = store.publisher("rummy.scoring.events.v1", "scores.sqlite", 3)
    publisher.publish("match-1", "result", 1, [NewEvent("match_scored", b"y")])
    publisher.close()
    with EmbeddedEventLog(directory / "scores.sqlite", 3) as published:
        assert [r.seq for r in published.read_stream("match-1")] == [1]

    snapshots = store.snapshots("ignored:", "snapshots.sqlite")
    snapshots.save(Snapshot("g1", 1, LogPosition(0, 0), "v1", b"state"))
    snapshots.close()
    assert (directory / "snapshots.sqlite").exists()

    kv = store.key_value("scoring.sqlite")
    assert isinstance(kv, SqliteKV)
    kv.set("k", "v")
    kv.close()
    assert SqliteKV(directory / "scoring.sqlite").get("k") == b"v"
    assert store.checkpoints("ignored:") is None
    assert store.redis is None


@pytest.mark.integration
def test_the_kafka_store_opens_topics_and_keeps_the_rest_in_redis(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str, tmp_path: Path
) -> None:
    location = StoreLocation.parse(f"kafka://{kafka_bootstrap}?redis={redis_url}", SETTING)
    store = location.open(redis_timeout_s=2)
    never = tmp_path / "events.sqlite"  # a Kafka store reads the topic, never the file
    topic = f"{unique_prefix}.rummy.game.events.v1"
    with store.log(topic, never, 3, writer=True, checkpoints=store.checkpoints(f"{unique_prefix}:")) as log:
        assert isinstance(log, KafkaEventLog)
        log.append("g1", "c1", 0, [NewEvent("game_started", b"x")])
    with store.log(topic, never, 3) as reader:
        assert [r.event_type for r in reader.read_stream("g1")] == ["game_started"]
    assert not never.exists()

    publisher = store.publisher(f"{unique_prefix}.rummy.scoring.events.v1", "scores.sqlite", 3)
    publisher.publish("match-1", "result", 1, [NewEvent("match_scored", b"y")])
    publisher.close()
    with store.log(f"{unique_prefix}.rummy.scoring.events.v1", "scores.sqlite", 3) as published:
        assert [r.seq for r in published.read_stream("match-1")] == [1]

    assert isinstance(store.redis, Redis)
    assert store.redis.connection_pool.connection_kwargs["socket_timeout"] == 2
    snapshots = store.snapshots(f"{unique_prefix}:", "snapshots.sqlite")
    snapshots.save(Snapshot("g1", 1, LogPosition(0, 0), "v1", b"state"))
    assert store.redis.exists(f"{unique_prefix}:game:g1:snapshot") == 1
    checkpoints = store.checkpoints(f"{unique_prefix}:")
    assert checkpoints is not None
    checkpoints.save("partition-0", b"offset")
    assert checkpoints.load("partition-0") == b"offset"
    kv = store.key_value("scoring.sqlite")
    assert kv is store.redis
    kv.set(f"{unique_prefix}:k", "v")
    assert kv.get(f"{unique_prefix}:k") == b"v"
    store.redis.close()
