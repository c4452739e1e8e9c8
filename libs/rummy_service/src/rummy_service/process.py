"""`python -m rummy_<service>`: one way every service runs as a process until SIGINT or SIGTERM."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from rummy_service import logs, metrics, preflight
from rummy_service.config import ConfigError

log = logging.getLogger("rummy_service")
INTERRUPTED = 130  # the shell's status for a command ended by Ctrl-C


class Stoppable(Protocol):
    async def stop(self) -> None: ...


class Configured(Protocol):
    def needs(self) -> preflight.Needs: ...


S = TypeVar("S", bound=Stoppable)
C = TypeVar("C", bound=Configured)


class _Started:
    """Whether start returned: Ctrl-C before it is a start cut short, after it a clean stop."""

    def __init__(self) -> None:
        self.done = False


async def _serve(start: Callable[[], Awaitable[S]], describe: Callable[[S], str], started: _Started) -> None:
    service = await start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    started.done = True
    print(describe(service), flush=True)
    await stop.wait()
    await service.stop()


def run_service(
    name: str,
    load: Callable[[], C],
    start: Callable[[C], Awaitable[S]],
    describe: Callable[[S], str],
    metrics_variable: str = "",
) -> None:
    """Load the configuration, check what it needs (`preflight`), start the service, print where it
    listens, and stop it cleanly on SIGINT or SIGTERM (exit status 0).

    Logging follows LOG_LEVEL and LOG_FORMAT (`logs.configure`); /metrics is served where the
    environment variable `metrics_variable` says (unset: not served).

    Every way it can fail to start ends in one line on stderr, `name: what to fix`, and exit status 1
    (130 when Ctrl-C cut the start short): a bad setting, a store that does not answer or cannot be
    written, an address it cannot listen on. An error nobody foresaw is one line too, with its type;
    LOG_LEVEL=DEBUG logs its traceback before it.
    """
    started = _Started()
    try:
        logs.configure()
        config = load()
        preflight.check(config.needs(), lambda line: log.warning("%s", line))
        metrics.serve(os.environ.get(metrics_variable, ""), metrics_variable)
        asyncio.run(_serve(lambda: start(config), describe, started))
    except KeyboardInterrupt:
        if started.done:
            sys.exit(0)
        print(f"{name}: interrupted while starting", file=sys.stderr, flush=True)
        sys.exit(INTERRUPTED)
    except ConfigError as exc:
        sys.exit(f"{name}: {exc}")
    except Exception as exc:
        log.debug("%s failed", name, exc_info=True)
        when = "failed" if started.done else "could not start"
        sys.exit(f"{name}: {when}: {type(exc).__name__}: {str(exc).partition(chr(10))[0]}")
    sys.exit(0)
