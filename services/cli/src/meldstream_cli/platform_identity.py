"""The identity service beside the others in `meldstream run`, and the credentials it gives them.

Each run makes a fresh credential for each service it starts (the engine's forwards tables, the web
gateway's plays its quick-play bots), hands each one to that service alone and only their hashes to
identity, so no service can act as another and nothing lasts past the run. Accounts last: on the
embedded store they are in `identity/` beside the engine's files, on Kafka in identity's topic.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import replace
from pathlib import Path

from rummy_engine.config import EngineConfig
from rummy_identity import config as identity_config
from rummy_identity import credentials
from rummy_identity.accounts import SERVICE_SCOPES
from rummy_identity.service import RunningIdentity, start_identity
from rummy_identity.store import TOPIC
from rummy_service.config import ConfigError
from rummy_service.public_keys import DEFAULT_IDENTITY, IDENTITY_VARIABLE
from rummy_store.event_log import TOPIC as GAMES

DEMO_PASSWORD_FILE = "demo-password"
# The admin credential a run's identity accepts (`meldstream accounts service-credentials admin`), so
# its operator can create operator accounts (`meldstream accounts create-operator`); unset, nobody can.
ADMIN_VARIABLE = "MELDSTREAM_ADMIN_CREDENTIAL"


def identity_dir(config: EngineConfig) -> Path:
    data = Path(config.data_dir)
    return data if config.store_setting else data.parent / "identity"


async def start_platform_identity(config: EngineConfig) -> tuple[RunningIdentity, dict[str, str]]:
    """Identity on the engine's store, and a credential for each service (by name)."""
    issued = credentials.service_credentials(SERVICE_SCOPES)
    admin = os.environ.get(ADMIN_VARIABLE, "")
    if admin:
        parsed = credentials.parse(admin, credentials.SERVICE)
        if parsed is None or parsed.owner != "admin":
            raise ConfigError(
                f"{ADMIN_VARIABLE} is not an admin credential: make one with "
                "`meldstream accounts service-credentials admin`"
            )
        issued["admin"] = admin
    loaded = identity_config.load()
    address = os.environ.get(IDENTITY_VARIABLE) or (
        "127.0.0.1:0" if config.address.endswith(":0") else DEFAULT_IDENTITY
    )
    settings = replace(
        loaded,
        address=address,
        kafka=config.kafka,
        kafka_client=config.kafka_client,
        redis=config.redis,
        data_dir=str(identity_dir(config)),
        store_setting="",
        key_prefix=config.key_prefix,
        topic=config.topic.removesuffix(GAMES) + TOPIC if config.topic.endswith(GAMES) else loaded.topic,
        services=credentials.hashes(issued),
        tls=config.tls,
    )
    return await start_identity(settings), issued


def demo_password(config: EngineConfig) -> str:
    """The demo accounts' password: made at the first demo, kept (owner-only) with identity's files."""
    path = identity_dir(config) / DEMO_PASSWORD_FILE
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(18))
        path.chmod(0o600)
    return path.read_text().strip()
