"""`python -m rummy_engine`: the engine as a process, configured by environment variables only."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys

from rummy_engine import config as engine_config
from rummy_engine.engine import start_engine


async def serve() -> None:
    engine = await start_engine(engine_config.load())
    print(f"engine listening on {engine.address} ({engine.stores.description})", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await engine.stop()


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    logging.getLogger("kafka").setLevel(logging.WARNING)  # kafka-python logs every connection at INFO
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())
    sys.exit(0)


if __name__ == "__main__":
    main()
