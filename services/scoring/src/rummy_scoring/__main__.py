"""`python -m rummy_scoring`: scoring as a process, configured by environment variables only."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys

from rummy_scoring import config as scoring_config
from rummy_scoring.service import start_scoring


async def serve() -> None:
    scoring = await start_scoring(scoring_config.load())
    print(f"scoring listening on {scoring.address}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await scoring.stop()


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    logging.getLogger("kafka").setLevel(logging.WARNING)  # kafka-python logs every connection at INFO
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())
    sys.exit(0)


if __name__ == "__main__":
    main()
