"""Players, operators and stores for engine tests: tokens come from the session's real identity
service (the root conftest's `identity`), as every client's do."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from rummy_client import GameClient
from rummy_identity.testing import IdentityProcess, Player


@dataclass(frozen=True, slots=True)
class People:
    """Three signed-up players (ann, bob, cyd), an outsider (zed) and an operator (ops)."""

    identity: IdentityProcess
    players: list[Player]
    outsider: Player
    ops: Player

    @property
    def ids(self) -> list[str]:
        return [p.id for p in self.players]

    def clients(self, address: str, **options: Any) -> list[GameClient]:
        return [GameClient(address, p.token, retry_for_s=0, **options) for p in self.players]

    def client(self, address: str, who: Player, **options: Any) -> GameClient:
        return GameClient(address, who.token, **{"retry_for_s": 0, **options})


@pytest.fixture
def people(identity: IdentityProcess) -> People:
    return People(
        identity,
        [identity.player(name) for name in ("ann", "bob", "cyd")],
        identity.player("zed"),
        identity.operator(),
    )


@pytest.fixture(params=["embedded", pytest.param("kafka", marks=pytest.mark.integration)])
def stores(request: pytest.FixtureRequest, tmp_path: Path, identity: IdentityProcess) -> dict[str, Any]:
    """EngineConfig fields for each store: a test taking it runs on the embedded store and on real
    Kafka + Redis (what holds for bad input must hold on both); the identity service either way."""
    if request.param == "embedded":
        return {"data_dir": str(tmp_path), "identity": identity.address}
    prefix = request.getfixturevalue("unique_prefix")
    return {
        "kafka": request.getfixturevalue("kafka_bootstrap"),
        "redis": request.getfixturevalue("redis_url"),
        "topic": f"{prefix}.rummy.game.events.v1",
        "key_prefix": f"{prefix}:",
        "identity": identity.address,
    }
