"""`python -m rummy_<service>`: one way every service runs as a process until SIGINT or SIGTERM."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from rummy_service import logs, metrics
from rummy_service.config import ConfigError


class Stoppable(Protocol):
    async def stop(self) -> None: ...


S = TypeVar("S", bound=Stoppable)


async def _serve(start: Callable[[], Awaitable[S]], describe: Callable[[S], str]) -> None:
    service = await start()
    print(describe(service), flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await service.stop()


def run_service(
    start: Callable[[], Awaitable[S]], describe: Callable[[S], str], metrics_variable: str
) -> None:
    """Start the service, print where it listens, and stop it cleanly on SIGINT or SIGTERM.

    Logging follows LOG_LEVEL and LOG_FORMAT (`logs.configure`); /metrics is served where the
    environment variable `metrics_variable` says (unset: not served).

    A `ConfigError` (a bad setting, a store it cannot use) ends the process with its message alone:
    it says what to change, a traceback would only bury it.
    """
    try:
        logs.configure()
        metrics.serve(os.environ.get(metrics_variable, ""), metrics_variable)
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_serve(start, describe))
    except ConfigError as exc:
        sys.exit(str(exc))
    sys.exit(0)
