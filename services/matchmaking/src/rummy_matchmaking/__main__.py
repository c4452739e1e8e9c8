"""`python -m rummy_matchmaking`: matchmaking as a process, configured by environment variables only."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys

from rummy_matchmaking import config as matchmaking_config
from rummy_matchmaking.service import start_matchmaking


async def serve() -> None:
    running = await start_matchmaking(matchmaking_config.load())
    print(f"matchmaking listening on {running.address}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await running.stop()


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    logging.getLogger("kafka").setLevel(logging.WARNING)  # kafka-python logs every connection at INFO
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())
    sys.exit(0)


if __name__ == "__main__":
    main()
