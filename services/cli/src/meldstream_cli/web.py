"""The web gateway beside the engine in `meldstream run`: the browser app, on the same services."""

from __future__ import annotations

import errno
import os
from dataclasses import replace

from meldstream_web import config as web_config
from meldstream_web.server import RunningGateway, start_gateway
from rummy_engine.config import EngineConfig
from rummy_infra.local import free_port
from rummy_service.server import check_listen

from meldstream_cli.platform_services import PlatformServices


async def start_web(
    config: EngineConfig, services: PlatformServices, address: str | None, credential: str
) -> RunningGateway:
    """The gateway on `address` (or WEB_ADDRESS), bridged to this run's engine, matchmaking and scoring.
    When neither is given and the default port is busy (another run, a test), a free port is used: the
    printed URL says which. `credential` is the gateway's own at identity (its quick-play bots)."""
    settings = web_config.load()
    explicit = bool(address or os.environ.get("WEB_ADDRESS"))
    settings = replace(
        settings,
        address=address or settings.address,
        engine=config.address,
        matchmaking=services.matchmaking.address,
        scoring=services.scoring.address,
        identity=config.identity,
        service_credential=credential,
        chat=replace(settings.chat, store=config.store),  # chat's topic in the run's own store
    )
    if explicit:
        check_listen(settings.address)  # a port in use is one line naming it, not a fallback
    try:
        return await start_gateway(settings)
    except OSError as exc:
        if explicit or exc.errno != errno.EADDRINUSE:
            raise
    host, _ = settings.host_port
    fallback = replace(settings, address=f"{host}:{free_port()}")
    return await start_gateway(fallback)
