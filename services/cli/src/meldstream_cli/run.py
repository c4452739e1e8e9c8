"""`meldstream run`: the platform on one machine (engine, matchmaking, scoring), embedded or on Kafka + Redis.

`--demo N` keeps N tables of bots going the whole way through the client SDK: they queue, matchmaking
seats them, they play, and each result is printed with its rating changes and the leaderboard as the
game ends, so a newcomer sees the flow and has games to watch (`WatchGame`) and replay.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from dataclasses import replace
from typing import Any

from rummy_engine.engine import start_engine
from rummy_service.auth import OPERATOR, TokenIssuer

from meldstream_cli.platform_args import add_store_options, config_from
from meldstream_cli.platform_services import demo, start_services, with_tables


def register(commands: Any) -> None:
    parser = commands.add_parser("run", help="run the platform (embedded store unless --kafka/--redis)")
    add_store_options(parser)
    parser.add_argument("--address", help="where the engine listens (default 127.0.0.1:50051)")
    parser.add_argument("--demo", type=int, default=0, metavar="N", help="keep N tables of bots playing")
    parser.add_argument("--turn-timeout-ms", type=int, help="default turn time limit (0 = none)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.demo < 0:
        raise SystemExit("meldstream run: --demo takes a number of tables >= 0")
    config = config_from(args)
    if args.address:
        config = replace(config, address=args.address)
    if args.turn_timeout_ms is not None:
        config = replace(config, turn_timeout_ms=args.turn_timeout_ms)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(config, args.demo))
    return 0


async def _serve(config: Any, tables: int) -> None:
    config = with_tables(config)  # the engine creates games from matchmaking's TableFormed
    engine = await start_engine(config)
    try:
        services = await start_services(config)
    except BaseException:  # e.g. matchmaking's journal of another format: nothing is left running
        await engine.stop()
        raise
    tokens = TokenIssuer(config.token_secret)
    print(f"meldstream engine listening on {engine.address}", flush=True)
    print(f"  store: {engine.stores.description}", flush=True)
    print(f"  try:   grpcurl -plaintext {engine.address} list", flush=True)
    print(f"  token: meldstream token PLAYER   (operator: {tokens.issue('operator', OPERATOR)})", flush=True)
    for line in services.lines:
        print(line, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    bots = asyncio.create_task(demo(services, engine.address, tokens, tables)) if tables else None
    if bots is not None:
        bots.add_done_callback(_report_failure)
    await stop.wait()
    if bots is not None:
        bots.cancel()
        await asyncio.gather(bots, return_exceptions=True)
    await services.stop()
    await engine.stop()


def _report_failure(task: asyncio.Task[None]) -> None:
    """A demo that stops on an error says so (the platform keeps serving)."""
    if not task.cancelled() and task.exception() is not None:
        print(f"demo stopped: {task.exception()!r}", flush=True)
