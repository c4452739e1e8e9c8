"""pytest plugin: session-wide Kafka and Redis for integration tests, started lazily, named in the output.

Registered by the root ``conftest.py``. Servers start only when a test asks for ``kafka_bootstrap`` or
``redis_url`` and stop at the end of the session. Tests isolate themselves with ``unique_prefix``
(topic and key prefixes), never by flushing or deleting topics.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from rummy_infra.servers import Server, describe_choice, provide_kafka, provide_redis

_USED = pytest.StashKey[list[Server]]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_USED] = []


def pytest_report_header(config: pytest.Config) -> str:
    return f"meldstream servers: {describe_choice()}"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    used = config.stash.get(_USED, [])
    terminalreporter.section("meldstream servers used")
    if not used:
        terminalreporter.write_line("none (no integration test asked for Kafka or Redis)")
    for server in used:
        terminalreporter.write_line(f"{server.kind}: {server.address} from {server.origin}")


def _require_integration_marker(request: pytest.FixtureRequest) -> None:
    # `-m "not integration"` must mean "no servers"; an unmarked test asking for one is a mistake.
    if request.node.get_closest_marker("integration") is None:
        pytest.fail(f"{request.node.nodeid} uses a real server but is not marked @pytest.mark.integration")


@pytest.fixture(scope="session")
def _servers(request: pytest.FixtureRequest) -> Iterator[ExitStack]:
    with ExitStack() as stack:
        yield stack


def _provide(request: pytest.FixtureRequest, stack: ExitStack, which: str) -> Server:
    server = stack.enter_context(provide_kafka() if which == "kafka" else provide_redis())
    request.config.stash[_USED].append(server)
    return server


@pytest.fixture(scope="session")
def _kafka_server(request: pytest.FixtureRequest, _servers: ExitStack) -> Server:
    return _provide(request, _servers, "kafka")


@pytest.fixture(scope="session")
def _redis_server(request: pytest.FixtureRequest, _servers: ExitStack) -> Server:
    return _provide(request, _servers, "redis")


@pytest.fixture
def kafka_bootstrap(request: pytest.FixtureRequest, _kafka_server: Server) -> str:
    """Bootstrap address ("host:port") of the session's Kafka broker."""
    _require_integration_marker(request)
    return _kafka_server.address


@pytest.fixture
def redis_url(request: pytest.FixtureRequest, _redis_server: Server) -> str:
    """URL of the session's Redis server."""
    _require_integration_marker(request)
    return _redis_server.address


@pytest.fixture
def unique_prefix(request: pytest.FixtureRequest) -> str:
    """A prefix no other test (or test run) uses, for topic names, group ids and Redis keys."""
    name = re.sub(r"[^a-zA-Z0-9]+", "-", request.node.name)[:40].strip("-").lower()
    return f"t-{name}-{uuid.uuid4().hex[:10]}"
