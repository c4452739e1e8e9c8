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

The identity service starts first, on the same store: people sign up and in at the web app, and
`meldstream token --name NAME` prints an access token for an account. Each service gets its own
credential at identity for the run. On the embedded default the platform runs in development mode (the
public seed key and identity key secret, said at start); on Kafka it needs ENGINE_SEED_KEY,
IDENTITY_KEY_SECRET and MATCHMAKING_FORWARD_SECRET, as the service processes do.
Before anything starts, Kafka and Redis must answer (within MELDSTREAM_CONNECT_WAIT_S, 15 s) and the
embedded store's directories must take a write: otherwise one line says what to fix.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
from dataclasses import replace
from typing import Any

from rummy_engine.config import EngineConfig
from rummy_engine.engine import start_engine
from rummy_engine.seeds import DEV_SEED_KEY
from rummy_identity.config import DEV_KEY_SECRET
from rummy_infra.local import free_port
from rummy_infra.serving import wait_serving
from rummy_service import logs, metrics
from rummy_service.config import check_address
from rummy_service.process import INTERRUPTED

from meldstream_cli.platform_args import add_store_options, config_from, wait_for_stores
from meldstream_cli.platform_identity import demo_password, start_platform_identity
from meldstream_cli.platform_services import (
    demo,
    demo_players,
    matchmaking_dir,
    scoring_dir,
    start_services,
    with_tables,
)
from meldstream_cli.web import start_web


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "run",
        help="run the platform (embedded store unless --store kafka://... or --kafka/--redis)",
        description="Run the engine, matchmaking, scoring and the web app in this process until Ctrl-C: on "
        "the embedded store in --data-dir (development mode, no servers needed), or on Kafka and Redis "
        "(--store kafka://HOST:PORT?redis=URL, or --kafka and --redis; ENGINE_SEED_KEY, "
        "IDENTITY_KEY_SECRET and MATCHMAKING_FORWARD_SECRET required). Sign up in the web app; "
        "`meldstream token --name NAME` prints a token.",
    )
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
            "meldstream run: --engines N needs N >= 1, and more than one needs Kafka and Redis "
            "(--store kafka://..., or --kafka and --redis: the embedded store has one writer)"
        )
    if args.address:
        check_address(args.address, "--address")
        config = replace(config, address=args.address)
    if args.web:
        check_address(args.web, "--web")
    if args.turn_timeout_ms is not None:
        config = replace(config, turn_timeout_ms=args.turn_timeout_ms)
    wait_for_stores(config, str(matchmaking_dir(config)), str(scoring_dir(config)))
    metrics.serve(args.metrics, "--metrics")  # one endpoint: the three services share this process
    started = asyncio.Event()
    try:
        asyncio.run(_serve(config, args.demo, args.engines, args.pace / 1000, args.web, started=started))
    except KeyboardInterrupt:
        if not started.is_set():
            print("meldstream run: interrupted while starting", file=sys.stderr)
            return INTERRUPTED
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
            wait_serving(address, started[-1], timeout_s=90, credentials=config.tls.channel_credentials())
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
    config: EngineConfig,
    tables: int,
    engines: int,
    pace_s: float,
    web_address: str | None,
    *,
    started: asyncio.Event,
) -> None:
    config = with_tables(config)  # the engine creates games from matchmaking's TableFormed
    identity, credentials = await start_platform_identity(config)
    config = replace(config, identity=identity.address, service_credential=credentials["engine"])
    try:
        engine = await start_engine(config)
    except BaseException:
        await identity.stop()
        raise
    try:
        others = await asyncio.to_thread(_more_engines, config, engines - 1)
    except BaseException:
        await engine.stop()
        await identity.stop()
        raise
    try:
        services = await start_services(config)
    except BaseException:  # e.g. matchmaking's journal of another format: nothing is left running
        await asyncio.to_thread(_stop_engines, others)
        await engine.stop()
        await identity.stop()
        raise
    try:
        web = await start_web(
            replace(config, address=engine.address), services, web_address, credentials["web"]
        )
    except BaseException:
        await services.stop()
        await asyncio.to_thread(_stop_engines, others)
        await engine.stop()
        await identity.stop()
        raise
    stop = asyncio.Event()  # from here on Ctrl-C stops what started, in order
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    started.set()
    grpcurl = "-cacert CA.pem" if config.tls.serves else "-plaintext"
    print(f"meldstream identity listening on {identity.address}", flush=True)
    print(f"meldstream engine listening on {engine.address}", flush=True)
    print(f"  store:  {engine.stores.description}", flush=True)
    print(f"  try:    grpcurl {grpcurl} {engine.address} list", flush=True)
    print("  tokens: sign up in the web app, then `meldstream token --name NAME` (10 minutes each)")
    if identity.config.key_secret == DEV_KEY_SECRET or config.seed_key == DEV_SEED_KEY:
        print(
            "  development mode: the public seed key and identity key secret (anyone can foresee "
            "deals and open the signing keys); set ENGINE_SEED_KEY and IDENTITY_KEY_SECRET for "
            "anything else",
            flush=True,
        )
    for line in services.lines:
        print(line, flush=True)
    print(f"meldstream web on {web.url}   (open it in a browser to play)", flush=True)
    bots = None
    if tables:
        players = await asyncio.to_thread(demo_players, identity, 3 * tables, demo_password(config))
        bots = asyncio.create_task(
            demo(services, replace(config, address=engine.address), players, pace_s=pace_s)
        )
    if bots is not None:
        bots.add_done_callback(_report_failure)
    await stop.wait()
    if bots is not None:
        bots.cancel()
        await asyncio.gather(bots, return_exceptions=True)
    await web.stop()
    await services.stop()
    await asyncio.to_thread(_stop_engines, others)
    await engine.stop()
    await identity.stop()


def _report_failure(task: asyncio.Task[None]) -> None:
    """A demo that stops on an error says so (the platform keeps serving)."""
    if not task.cancelled() and task.exception() is not None:
        print(f"demo stopped: {task.exception()!r}", flush=True)
