"""`python -m meldstream_web`: the gateway alone, in front of services already running (WEB_ADDRESS,
ENGINE_ADDRESS, MATCHMAKING_ADDRESS, SCORING_ADDRESS, IDENTITY_ADDRESS, MELDSTREAM_SERVICE_CREDENTIAL)."""

from __future__ import annotations

from rummy_service.process import run_service
from rummy_service.server import check_listen

from meldstream_web import config
from meldstream_web.config import WebConfig
from meldstream_web.server import RunningGateway, start_gateway


async def _start(settings: WebConfig) -> RunningGateway:
    check_listen(settings.address)  # a port in use is one line naming it, as for the gRPC services
    return await start_gateway(settings)


def main() -> None:
    def describe(gateway: RunningGateway) -> str:
        return f"meldstream web on {gateway.url}"

    run_service("meldstream_web", config.load, _start, describe)


if __name__ == "__main__":
    main()
