"""`python -m meldstream_web`: the gateway alone, in front of services already running (WEB_ADDRESS,
ENGINE_ADDRESS, MATCHMAKING_ADDRESS, SCORING_ADDRESS, MELDSTREAM_TOKEN_SECRET)."""

from __future__ import annotations

import asyncio
import contextlib
import signal

from rummy_service import logs

from meldstream_web import config
from meldstream_web.server import start_gateway


async def _serve() -> None:
    logs.configure()
    gateway = await start_gateway(config.load())
    print(f"meldstream web on {gateway.url}", flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    await stop.wait()
    await gateway.stop()


def main() -> None:
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve())


if __name__ == "__main__":
    main()
