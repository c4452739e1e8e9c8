"""`meldstream run`: the platform on one machine: the engine on the embedded store, or Kafka + Redis.

`--demo N` keeps N tables of bots playing through the client SDK, so a newcomer has games to watch
(`WatchGame`) and replay; each finished demo game is replaced by a new one.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import signal
from dataclasses import replace
from typing import Any

from rummy_client import GameClient
from rummy_client.bots import BotPlayer
from rummy_engine.engine import RunningEngine, start_engine
from rummy_rules.variants import PLAYABLE_VARIANTS
from rummy_service.auth import OPERATOR, TokenIssuer

from meldstream_cli.platform_args import add_store_options, config_from
from meldstream_cli.platform_services import queue_demo, start_services, with_tables

DEMO_PLAYERS = ("ada", "ben", "cleo")


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


async def _serve(config: Any, demo: int) -> None:
    config = with_tables(config)  # the engine creates games from matchmaking's TableFormed
    engine = await start_engine(config)
    services = await start_services(config)
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
    tables = [asyncio.create_task(_demo_table(engine, tokens, n)) for n in range(demo)]
    if demo:  # and one table that goes through matchmaking (and scoring, on Kafka + Redis)
        tables.append(asyncio.create_task(queue_demo(services, engine.address, tokens)))
    await stop.wait()
    for task in tables:
        task.cancel()
    await asyncio.gather(*tables, return_exceptions=True)
    await services.stop()
    await engine.stop()


async def _demo_table(engine: RunningEngine, tokens: TokenIssuer, table: int) -> None:
    clients = [GameClient(engine.address, tokens.issue(player)) for player in DEMO_PLAYERS]
    try:
        for game in itertools.count(1):
            variant = PLAYABLE_VARIANTS[(table + game - 1) % len(PLAYABLE_VARIANTS)]
            created = await clients[0].create_game(variant, list(DEMO_PLAYERS))
            print(f"demo table {table}: {variant} game {created.game_id} started", flush=True)
            bots = [BotPlayer(client, created.game_id, seat) for seat, client in enumerate(clients)]
            finals = await asyncio.gather(*(bot.play() for bot in bots))
            final = finals[0]
            print(
                f"demo table {table}: game {created.game_id} over after {final.seq} events; "
                f"winners {list(final.winners)}, totals {list(final.totals)}",
                flush=True,
            )
    finally:
        for client in clients:
            await client.close()
