"""Root conftest: the harness that finds or starts Kafka and Redis (rummy_infra), and one real identity
service for the session, through which every test gets its tokens (rummy_identity.testing)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from rummy_identity.testing import IdentityProcess, running_identity

pytest_plugins = ["rummy_infra.pytest_plugin"]


@pytest.fixture(scope="session")
def identity() -> Iterator[IdentityProcess]:
    """An identity service (embedded store: no Kafka needed) with a credential for every service."""
    with running_identity() as service:
        yield service
