"""pytest plugin: session-wide Kafka and Redis for integration tests, started lazily, named in the output.

Registered by the root ``conftest.py``. Servers start only when a test asks for ``kafka_bootstrap`` or
``redis_url`` and stop at the end of the session. Tests isolate themselves with ``unique_prefix``
(topic and key prefixes), never by flushing or deleting topics. A test that kills brokers asks for
``kafka_cluster``: a 3-node cluster of its own, started once (about 20 s) for the session's tests
that ask for it; a node a test leaves down is restarted after that test.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator

import pytest

from rummy_infra.kafka_cluster import KafkaCluster, provide_kafka_cluster
from rummy_infra.servers import Server, describe_choice, provide_kafka, provide_redis

_USED = pytest.StashKey[list[Server]]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_USED] = []
    # Development mode (the public token secret and seed key) for every service a test starts, in
    # process or as `python -m`; a test of production mode's refusals sets MELDSTREAM_DEV=0 itself.
    os.environ.setdefault("MELDSTREAM_DEV", "1")


def pytest_report_header(config: pytest.Config) -> str:
    return f"meldstream servers: {describe_choice()}"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    used = config.stash.get(_USED, [])
    terminalreporter.section("meldstream servers used")
    if not used:
        terminalreporter.write_line("none (no integration test asked for Kafka or Redis)")
    for server in used:
        terminalreporter.write_line(f"{server.kind}: {server.address} from {server.origin}")


@pytest.fixture(scope="session")
def _kafka_server(request: pytest.FixtureRequest) -> Iterator[Server]:
    with provide_kafka() as server:
        request.config.stash[_USED].append(server)
        yield server


@pytest.fixture(scope="session")
def _redis_server(request: pytest.FixtureRequest) -> Iterator[Server]:
    with provide_redis() as server:
        request.config.stash[_USED].append(server)
        yield server


@pytest.fixture(scope="session")
def _kafka_cluster(request: pytest.FixtureRequest) -> Iterator[KafkaCluster]:
    with provide_kafka_cluster(nodes=3) as cluster:
        origin = "local 3-node KRaft cluster (deploy/local/kafka.sh)"
        request.config.stash[_USED].append(Server("kafka", cluster.bootstrap, origin))
        yield cluster


def _server(request: pytest.FixtureRequest, fixture: str) -> Server:
    server: Server = _marked(request).getfixturevalue(fixture)
    return server


def _marked(request: pytest.FixtureRequest) -> pytest.FixtureRequest:
    # `-m "not integration"` must mean "no servers"; an unmarked test asking for one is a mistake, caught
    # before anything is started.
    if request.node.get_closest_marker("integration") is None:
        pytest.fail(f"{request.node.nodeid} uses a real server but is not marked @pytest.mark.integration")
    return request


@pytest.fixture
def kafka_bootstrap(request: pytest.FixtureRequest) -> str:
    """Bootstrap address ("host:port") of the session's Kafka broker."""
    return _server(request, "_kafka_server").address


@pytest.fixture
def redis_url(request: pytest.FixtureRequest) -> str:
    """URL of the session's Redis server."""
    return _server(request, "_redis_server").address


@pytest.fixture
def kafka_cluster(request: pytest.FixtureRequest) -> Iterator[KafkaCluster]:
    """A 3-node Kafka cluster shared by the tests that ask for it (not the single broker of
    ``kafka_bootstrap``), whose nodes a test may kill and restart; a node left down is restarted after
    the test, so the next one finds every node up."""
    cluster: KafkaCluster = _marked(request).getfixturevalue("_kafka_cluster")
    yield cluster
    cluster.heal()


@pytest.fixture
def unique_prefix(request: pytest.FixtureRequest) -> str:
    """A prefix no other test (or test run) uses, for topic names, group ids and Redis keys."""
    name = re.sub(r"[^a-zA-Z0-9]+", "-", request.node.name)[:40].strip("-").lower()
    return f"t-{name}-{uuid.uuid4().hex[:10]}"
