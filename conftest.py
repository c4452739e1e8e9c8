"""Root conftest: the harness that finds or starts Kafka and Redis (rummy_infra), one real identity
service for the session, through which every test gets its tokens (rummy_identity.testing), and an
engine process on an embedded store for a module of client tests."""

from __future__ import annotations

import os
from collections.abc import Iterator

# Before anything imports grpc: without fork support, a child forked by a test (pexpect's pty.fork for
# `meldstream play`) does not restart gRPC's poller thread, which then met the descriptors the child
# closes before exec ("Epoll1Poller ... epoll_wait error: Bad file descriptor") and killed the child.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

import pytest
from rummy_identity.testing import IdentityProcess, running_identity
from rummy_infra.local import free_port
from rummy_infra.serving import ServiceProcess

pytest_plugins = ["rummy_infra.pytest_plugin"]
# Engines the tests start from the environment deal at creation, as engines built in code do, unless a
# test sets a seed window itself (tests/e2e/test_seed_contributions.py): tests that create a game and
# act at once must not wait for seeds no one sends.
os.environ.setdefault("ENGINE_SEED_WINDOW_MS", "0")
# Nor do they keep a dropped seat for a grace (meldstream M3) unless a test asks for one
# (tests/browser/test_disconnect.py, the engine's test_presence.py): many tests leave a table mid-game,
# and a seat's turns waiting out a grace would slow the games they go on to watch.
os.environ.setdefault("ENGINE_DISCONNECT_GRACE_MS", "0")


@pytest.fixture(scope="session")
def identity() -> Iterator[IdentityProcess]:
    """An identity service (embedded store: no Kafka needed) with a credential for every service."""
    with running_identity() as service:
        yield service


@pytest.fixture(scope="module")
def embedded_engine(
    tmp_path_factory: pytest.TempPathFactory, identity: IdentityProcess
) -> Iterator[ServiceProcess]:
    """`python -m rummy_engine` on its own embedded store, trusting the session's identity service."""
    data = tmp_path_factory.mktemp("engine")
    address = f"127.0.0.1:{free_port()}"
    env = {
        **os.environ,
        "ENGINE_ADDRESS": address,
        "ENGINE_DATA_DIR": str(data / "store"),
        **identity.service_env(),
    }
    process = ServiceProcess("rummy_engine", env, address, data / "engine.log")
    process.start()
    yield process
    process.stop()
