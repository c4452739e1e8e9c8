"""`meldstream run`: the platform on one machine (engine, matchmaking, scoring), embedded or on Kafka + Redis.

`--demo N` keeps N tables of bots going the whole way through the client SDK: they queue, matchmaking
seats them, they play, and each result is printed with its rating changes and the leaderboard as the
game ends, so a newcomer sees the flow and has games to watch (`WatchGame`) and replay.

`--pace MS` makes each demo bot wait MS before each move, so people can watch (`--demo 2 --pace 1500`).
The web gateway (meldstream_web) starts with the rest at `--web` (WEB_ADDRESS, default
http://127.0.0.1:8080; a busy default port falls back to a free one) and its URL is printed.

`--engines N` (Kafka + Redis only) runs N engines, this process's and N-1 `python -m rummy_engine`
processes on free loopback ports, sharing the game topic's partitions; clients need only the first
address (an engine names the owner of a game it does not own, and the SDK goes there).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from dataclasses import replace
from typing import Any

from rummy_engine.config import EngineConfig
from rummy_engine.engine import start_engine
from rummy_infra.local import free_port
from rummy_infra.serving import wait_serving
from rummy_service import logs, metrics
from rummy_service.auth import OPERATOR, TokenIssuer

from meldstream_cli.platform_args import add_store_options, config_from
from meldstream_cli.platform_services import demo, start_services, with_tables
from meldstream_cli.web import start_web


def register(commands: Any) -> None:
    parser = commands.add_parser("run", help="run the platform (embedded store unless --kafka/--redis)")
    add_store_options(parser)
    parser.add_argument("--address", help="where the engine listens (default 127.0.0.1:50051)")
    parser.add_argument("--demo", type=int, default=0, metavar="N", help="keep N tables of bots playing")
    parser.add_argument(
        "--pace", type=int, default=0, metavar="MS", help="demo bots wait MS before each move"
    )
    parser.add_argument(
        "--web", metavar="HOST:PORT", help="where the web app listens (default 127.0.0.1:8080)"
    )
    parser.add_argument("--turn-timeout-ms", type=int, help="default turn time limit (0 = none)")
    parser.add_argument(
        "--engines",
        type=int,
        default=1,
        metavar="N",
        help="engine processes sharing the partitions (Kafka only)",
    )
    parser.add_argument(
        "--metrics",
        metavar="HOST:PORT",
        default=os.environ.get("ENGINE_METRICS_ADDRESS", ""),
        help="serve Prometheus /metrics of the engine, matchmaking and scoring here "
        "(default ENGINE_METRICS_ADDRESS; unset: not served)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    logs.configure()  # LOG_LEVEL, LOG_FORMAT: the services' facts between the banner's lines
    if args.demo < 0:
        raise SystemExit("meldstream run: --demo takes a number of tables >= 0")
    config = config_from(args)
    if args.engines < 1 or (args.engines > 1 and config.embedded):
        raise SystemExit(
            "meldstream run: --engines N needs N >= 1, and more than one needs --kafka and --redis "
            "(the embedded store has one writer)"
        )
    if args.address:
        config = replace(config, address=args.address)
    if args.turn_timeout_ms is not None:
        config = replace(config, turn_timeout_ms=args.turn_timeout_ms)
    metrics.serve(args.metrics, "--metrics")  # one endpoint: the three services share this process
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(config, args.demo, args.engines, args.pace / 1000, args.web))
    return 0


def _more_engines(config: EngineConfig, count: int) -> list[subprocess.Popen[bytes]]:
    """`count` engine processes on free loopback ports, configured as this one; SERVING on return."""
    started: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(count):
            address = f"127.0.0.1:{free_port()}"
            env = {**os.environ, **replace(config, address=address, advertised="").to_env()}
            env["ENGINE_METRICS_ADDRESS"] = ""  # the port is this process's (--metrics)
            started.append(subprocess.Popen([sys.executable, "-m", "rummy_engine"], env=env))
            wait_serving(address, started[-1], timeout_s=90)
            print(f"meldstream engine listening on {address} (pid {started[-1].pid})", flush=True)
    except BaseException:
        _stop_engines(started)
        raise
    return started


def _stop_engines(engines: list[subprocess.Popen[bytes]]) -> None:
    for proc in engines:
        proc.terminate()  # SIGTERM: each leaves the group, its partitions move at once
    for proc in engines:
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


async def _serve(
    config: Any, tables: int, engines: int = 1, pace_s: float = 0.0, web_address: str | None = None
) -> None:
    config = with_tables(config)  # the engine creates games from matchmaking's TableFormed
    engine = await start_engine(config)
    try:
        others = await asyncio.to_thread(_more_engines, config, engines - 1)
    except BaseException:
        await engine.stop()
        raise
    try:
        services = await start_services(config)
    except BaseException:  # e.g. matchmaking's journal of another format: nothing is left running
        await asyncio.to_thread(_stop_engines, others)
        await engine.stop()
        raise
    try:
        web = await start_web(config, services, web_address)
    except BaseException:
        await services.stop()
        await asyncio.to_thread(_stop_engines, others)
        await engine.stop()
        raise
    tokens = TokenIssuer(config.token_secret)
    print(f"meldstream engine listening on {engine.address}", flush=True)
    print(f"  store: {engine.stores.description}", flush=True)
    print(f"  try:   grpcurl -plaintext {engine.address} list", flush=True)
    print(f"  token: meldstream token PLAYER   (operator: {tokens.issue('operator', OPERATOR)})", flush=True)
    for line in services.lines:
        print(line, flush=True)
    print(f"meldstream web on {web.gateway.url}   (open it in a browser to play)", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    bots = (
        asyncio.create_task(
            demo(services, engine.address, tokens, tables, pace_s=pace_s, on_table=web.games.add)
        )
        if tables
        else None
    )
    if bots is not None:
        bots.add_done_callback(_report_failure)
    await stop.wait()
    if bots is not None:
        bots.cancel()
        await asyncio.gather(bots, return_exceptions=True)
    await web.gateway.stop()
    await services.stop()
    await asyncio.to_thread(_stop_engines, others)
    await engine.stop()


def _report_failure(task: asyncio.Task[None]) -> None:
    """A demo that stops on an error says so (the platform keeps serving)."""
    if not task.cancelled() and task.exception() is not None:
        print(f"demo stopped: {task.exception()!r}", flush=True)
