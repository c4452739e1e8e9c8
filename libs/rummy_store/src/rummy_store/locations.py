"""Where the platform keeps its records, written as one URL-like location, and the stores opened there.

    sqlite:///DIR                         the embedded store: sqlite files in DIR (relative to the
    sqlite:////abs/DIR                    working directory with three slashes, absolute with four)
    kafka://HOST:PORT[,HOST:PORT]?redis=redis://HOST:6379/0
                                          Kafka topics, with Redis beside them (kafka-python)
    kafka+rdkafka://HOST:PORT[,...]?redis=...
                                          the same topics through confluent-kafka (librdkafka):
                                          same records, ids and group, a quarter of the client's CPU

Every service and the `meldstream` command choose between the two here and nowhere else: a caller
says what it needs (a topic's log, a publisher, snapshots, checkpoints, a key-value store) under both
names, the topic it is on Kafka and the file it is in the directory, and `StoreLocation.open` gives
the stores of the kind the location names.

The services' files have distinct names (events, snapshots, refusals, tables, scores, scoring), so
one directory can hold the whole platform's, as one Kafka cluster holds all its topics.

Redis is a parameter of the Kafka location, not a location of its own: Kafka is never used without
it (Redis holds the engine's snapshots and checkpoints, the owners directory and scoring's state), so
one value names the whole store, and a Kafka location without it is caught when parsed. Everything
after `redis=` is the Redis URL as written (its password and its own query need no escaping).
"""

from __future__ import annotations

import abc
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from redis import Redis

from rummy_store.checkpoints import CheckpointStore, RedisCheckpoints
from rummy_store.embedded_log import EmbeddedEventLog
from rummy_store.embedded_snapshots import EmbeddedSnapshotStore
from rummy_store.event_log import EventLog
from rummy_store.kafka_clients import KAFKA_PYTHON, RDKAFKA
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.kafka_topic import FROM_CLUSTER, Replication
from rummy_store.partitioning import DEFAULT_PARTITIONS
from rummy_store.publisher import EmbeddedPublisher, KafkaPublisher, Publisher
from rummy_store.redis_snapshots import RedisSnapshotStore
from rummy_store.snapshots import SnapshotStore
from rummy_store.sqlite_kv import SqliteKV

SQLITE: Final = "sqlite://"
KAFKA: Final = "kafka://"
KAFKA_SCHEMES: Final = {KAFKA: KAFKA_PYTHON, "kafka+rdkafka://": RDKAFKA}
"""Kafka store URL scheme -> the client library (`kafka_clients` backend) that opens it."""
REDIS_SCHEMES: Final = ("redis", "rediss", "unix")
KAFKA_TIMEOUT_S: Final = 10.0  # a Kafka log's bound on each call unless its caller sets one
FORMS: Final = "sqlite:///DIR or kafka://HOST:PORT?redis=redis://HOST:6379/0"

KeyValue = Redis | SqliteKV
"""Redis, or its embedded stand-in answering the same commands."""


class LocationError(ValueError):
    """A store location that names no store this build can open; the message is one line."""


def is_kafka_url(url: str) -> bool:
    """Whether `url` names a Kafka store, on either client (not whether it is well formed)."""
    return url.startswith(tuple(KAFKA_SCHEMES))


def is_redis_url(url: str) -> bool:
    return url.partition("://")[0] in REDIS_SCHEMES and "://" in url


@dataclass(frozen=True, slots=True)
class StoreLocation:
    """Kafka (`kafka`, bootstrap servers) with Redis (`redis`), or the embedded store (`kafka` empty)
    in `directory`. `setting` names the one URL it was parsed from (MELDSTREAM_STORE, --store), so
    messages name it; empty when separate settings (KAFKA_BOOTSTRAP, REDIS_URL, a data directory) did."""

    kafka: str = ""
    redis: str = ""
    directory: str = ""
    setting: str = field(default="", compare=False)
    client: str = KAFKA_PYTHON  # the Kafka backend (`kafka_clients`), named by the URL's scheme

    @classmethod
    def parse(cls, url: str, setting: str, *, redis_required: bool = True) -> StoreLocation:
        """The location `url` names; `LocationError` naming `setting` when it names none.

        `redis_required=False` for the one caller that runs on Kafka alone (matchmaking, as a single
        instance without its owners directory)."""
        said = f"{setting}={redacted(url)!r}"
        if url.startswith(SQLITE):
            return cls(directory=_directory(url[len(SQLITE) :], said), setting=setting)
        scheme = next((s for s in KAFKA_SCHEMES if url.startswith(s)), None)
        if scheme is not None:
            servers, _, query = url[len(scheme) :].partition("?")
            redis_url = _redis(query, said)
            if redis_required and not redis_url:
                raise LocationError(
                    f"{said} names no Redis: Kafka needs one beside it, e.g. "
                    f"{url.partition('?')[0]}?redis=redis://HOST:6379/0"
                )
            kafka = _servers(servers, said)
            return cls(kafka=kafka, redis=redis_url, setting=setting, client=KAFKA_SCHEMES[scheme])
        scheme, sep, _ = url.partition("://")
        unknown = f" (unknown scheme {scheme!r})" if sep else ""
        raise LocationError(f"{said} is not a store location{unknown}: write {FORMS}")

    @property
    def embedded(self) -> bool:
        return not self.kafka

    def open(self, *, redis_timeout_s: float | None = None) -> Store:
        """The stores at this location. `redis_timeout_s` bounds each Redis call (None: no bound)."""
        if self.embedded:
            return SqliteStore(Path(self.directory))
        client = None
        if self.redis:
            client = Redis.from_url(
                self.redis, socket_timeout=redis_timeout_s, socket_connect_timeout=redis_timeout_s
            )
        return KafkaStore(self.kafka, client, self.client)


def redacted(url: str) -> str:
    """`url` as it may be shown in a message or a log line: a Redis password in it, in a store URL's
    `redis=` or a Redis URL itself, replaced by ***."""
    return re.sub(r"((?:^|redis=)rediss?://[^:@/]*:)[^@]*@", r"\1***@", url)


def _directory(path: str, said: str) -> str:
    if not path.startswith("/"):
        raise LocationError(
            f"{said} names a host: write sqlite:///DIR (relative) or sqlite:////DIR (absolute)"
        )
    directory = path[1:]
    if not directory:
        raise LocationError(f"{said} names no directory: write sqlite:///DIR (relative) or sqlite:////DIR")
    if "?" in directory:
        raise LocationError(f"{said}: the embedded store takes no parameters, only sqlite:///DIR")
    return directory


def _servers(servers: str, said: str) -> str:
    for server in servers.split(","):
        host, colon, port = server.rpartition(":")
        if not colon or not host or not port.isdigit() or int(port) > 65535:
            raise LocationError(f"{said}: {server!r} is not a Kafka server HOST:PORT (e.g. kafka:9092)")
    return servers


def _redis(query: str, said: str) -> str:
    if not query:
        return ""
    name, equals, value = query.partition("=")
    if name != "redis" or not equals:
        raise LocationError(f"{said}: {name!r} is not a parameter of a Kafka store (only redis=URL)")
    if not is_redis_url(value):
        raise LocationError(f"{said}: its redis= is not a Redis URL (e.g. redis://HOST:6379/0)")
    return value


class Store(abc.ABC):
    """What a location opens. Each call names a store both ways, `topic` (or key `prefix`) for Kafka
    and Redis, `file` for the directory (a file name, or a path of another service's file); each
    kind reads the name it keeps and the options that apply to it."""

    @property
    @abc.abstractmethod
    def redis(self) -> Redis | None:
        """The Redis beside Kafka, for what has no store of its own here (the owners directory)."""

    @abc.abstractmethod
    def log(
        self,
        topic: str,
        file: str | Path,
        partitions: int = DEFAULT_PARTITIONS,
        *,
        writer: bool = False,
        claim_on_demand: bool = True,
        fence_groups: int | None = None,
        replication: Replication = FROM_CLUSTER,
        checkpoints: CheckpointStore | None = None,
        timeout_s: float = KAFKA_TIMEOUT_S,
        compacted: bool = False,
    ) -> EventLog:
        """An event log (`KafkaEventLog` says what the Kafka options mean; `partitions` creates).
        `compacted`: each record is its key's whole state, and Kafka keeps only the last per key."""

    @abc.abstractmethod
    def publisher(
        self,
        topic: str,
        file: str | Path,
        partitions: int = DEFAULT_PARTITIONS,
        *,
        replication: Replication = FROM_CLUSTER,
    ) -> Publisher: ...

    @abc.abstractmethod
    def snapshots(self, prefix: str, file: str) -> SnapshotStore: ...

    @abc.abstractmethod
    def checkpoints(self, prefix: str) -> CheckpointStore | None:
        """Where partition writers keep checkpoints (None: the embedded log needs none)."""

    @abc.abstractmethod
    def key_value(self, file: str) -> KeyValue: ...


class SqliteStore(Store):
    """Files in one directory, made (with any other file's directory) when a store is opened."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @property
    def redis(self) -> Redis | None:
        return None

    def _path(self, file: str | Path) -> Path:
        path = self.directory / file  # an absolute `file` stays as it is
        path.parent.mkdir(parents=True, exist_ok=True)  # another service's may not have started yet
        return path

    def log(
        self,
        topic: str,
        file: str | Path,
        partitions: int = DEFAULT_PARTITIONS,
        *,
        writer: bool = False,
        claim_on_demand: bool = True,
        fence_groups: int | None = None,
        replication: Replication = FROM_CLUSTER,
        checkpoints: CheckpointStore | None = None,
        timeout_s: float = KAFKA_TIMEOUT_S,
        compacted: bool = False,
    ) -> EventLog:
        return EmbeddedEventLog(self._path(file), partitions)

    def publisher(
        self,
        topic: str,
        file: str | Path,
        partitions: int = DEFAULT_PARTITIONS,
        *,
        replication: Replication = FROM_CLUSTER,
    ) -> Publisher:
        return EmbeddedPublisher(EmbeddedEventLog(self._path(file), partitions))

    def snapshots(self, prefix: str, file: str) -> SnapshotStore:
        return EmbeddedSnapshotStore(self._path(file))

    def checkpoints(self, prefix: str) -> CheckpointStore | None:
        return None

    def key_value(self, file: str) -> KeyValue:
        return SqliteKV(self._path(file))


class KafkaStore(Store):
    """Topics on one Kafka cluster; snapshots, checkpoints and keys in one Redis client."""

    def __init__(self, bootstrap: str, client: Redis | None, kafka_client: str = KAFKA_PYTHON) -> None:
        self.bootstrap = bootstrap
        self._redis = client
        self.kafka_client = kafka_client

    @property
    def redis(self) -> Redis | None:
        return self._redis

    def _client(self) -> Redis:
        if self._redis is None:
            raise LocationError(f"the Kafka store at {self.bootstrap} has no Redis for this: add ?redis=URL")
        return self._redis

    def log(
        self,
        topic: str,
        file: str | Path,
        partitions: int = DEFAULT_PARTITIONS,
        *,
        writer: bool = False,
        claim_on_demand: bool = True,
        fence_groups: int | None = None,
        replication: Replication = FROM_CLUSTER,
        checkpoints: CheckpointStore | None = None,
        timeout_s: float = KAFKA_TIMEOUT_S,
        compacted: bool = False,
    ) -> EventLog:
        return KafkaEventLog(
            self.bootstrap,
            topic,
            partitions,
            replication=replication,
            writer=writer,
            claim_on_demand=claim_on_demand,
            fence_groups=fence_groups,
            checkpoints=checkpoints,
            timeout_s=timeout_s,
            compacted=compacted,
            client=self.kafka_client,
        )

    def publisher(
        self,
        topic: str,
        file: str | Path,
        partitions: int = DEFAULT_PARTITIONS,
        *,
        replication: Replication = FROM_CLUSTER,
    ) -> Publisher:
        return KafkaPublisher(
            self.bootstrap, topic, partitions, replication=replication, client=self.kafka_client
        )

    def snapshots(self, prefix: str, file: str) -> SnapshotStore:
        return RedisSnapshotStore(self._client(), prefix)

    def checkpoints(self, prefix: str) -> CheckpointStore | None:
        return RedisCheckpoints(self._client(), prefix)

    def key_value(self, file: str) -> KeyValue:
        return self._client()
