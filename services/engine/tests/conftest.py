"""Tokens and stores for engine tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rummy_service.auth import DEV_SECRET, OPERATOR, TokenIssuer

TOKENS = TokenIssuer(DEV_SECRET)


def token(player: str, role: str = "player") -> str:
    return TOKENS.issue(player, role)


def operator_token() -> str:
    return TOKENS.issue("ops", OPERATOR)


@pytest.fixture(params=["embedded", pytest.param("kafka", marks=pytest.mark.integration)])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    """EngineConfig fields for each store: a test taking it runs on the embedded store and on real
    Kafka + Redis (what holds for bad input must hold on both)."""
    if request.param == "embedded":
        return {"data_dir": str(tmp_path)}
    prefix = request.getfixturevalue("unique_prefix")
    return {
        "kafka": request.getfixturevalue("kafka_bootstrap"),
        "redis": request.getfixturevalue("redis_url"),
        "topic": f"{prefix}.rummy.game.events.v1",
        "key_prefix": f"{prefix}:",
    }
