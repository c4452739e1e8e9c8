"""The gateway served by uvicorn inside an asyncio program (`meldstream run`, tests, `python -m`)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator

import uvicorn

from meldstream_web.app import create_app
from meldstream_web.config import WebConfig


class _EmbeddedServer(uvicorn.Server):
    """uvicorn without its signal handlers: the program it runs in owns SIGINT and SIGTERM and stops
    the gateway with the rest."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class RunningGateway:
    def __init__(self, server: uvicorn.Server, task: asyncio.Task[None], url: str) -> None:
        self._server = server
        self._task = task
        self.url = url

    async def stop(self) -> None:
        self._server.should_exit = True
        await self._task


async def start_gateway(config: WebConfig) -> RunningGateway:
    """Serve the gateway; returns once it accepts connections. The socket is bound here, so an address
    in use is an OSError to the caller (uvicorn would exit the whole process instead)."""
    host, port = config.host_port
    # IPPROTO_TCP named, not left 0: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and
    # the accepted connections inherit it; with Nagle on, every response after a connection's first
    # waited for the browser's delayed ACK (~40 ms on Linux), most of a click's round trip.
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    server = _EmbeddedServer(
        uvicorn.Config(
            create_app(config),
            host=host,
            port=port,
            log_level="warning",
            timeout_graceful_shutdown=2,  # open event streams are ended, not waited for
        )
    )
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            task.result()  # the failure to start, raised here
            raise RuntimeError(f"the web gateway did not start on {config.address}")
        await asyncio.sleep(0.02)
    return RunningGateway(server, task, config.url)
