"""`meldstream play VARIANT [--players N]`: a game against bots in the terminal, on the running platform.

The player is a client like any other: a development token for `--name`, CreateGame for a table of the
player and bots, the seat's stream, and the engine's legal actions as a numbered menu. The bots are
the SDK's, in this process, each waiting `--pace` ms before a move so the player can follow them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import uuid
from typing import Any

from meldstream_web.bots import play_paced
from rich.console import Console
from rummy.game.v1 import game_service_pb2 as gs
from rummy_client import GameClient, RpcFailure
from rummy_engine import config as engine_config
from rummy_service.tls import load_tls

from meldstream_cli import table_text
from meldstream_cli.platform_args import token_issuer

BOTS = ("ada", "ben", "cleo", "dana", "eli", "fay", "gus")


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "play",
        help="play a game against bots in the terminal",
        description="Create a table of you and bots on a running engine and play it from a numbered menu "
        "of your legal moves. Needs the platform running (meldstream run) and its token secret.",
    )
    parser.add_argument("variant", help="kalooki, rummy40, rummy500 or contract")
    parser.add_argument("--players", type=int, default=2, metavar="N", help="table size, you and N-1 bots")
    parser.add_argument("--name", default="", help="your player name (default: your login)")
    parser.add_argument("--pace", type=int, default=600, metavar="MS", help="bots wait MS before each move")
    parser.add_argument("--engine", help="the engine's address (default ENGINE_ADDRESS or 127.0.0.1:50051)")
    parser.add_argument(
        "--ca-file", default="", help="CA of the engine's certificate: TLS (default TLS_CA_FILE)"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if not 2 <= args.players <= len(BOTS) + 1:
        raise SystemExit(f"meldstream play: --players is 2 to {len(BOTS) + 1}")
    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(_play(args))
    return 130


async def _play(args: argparse.Namespace) -> int:
    console = Console(highlight=False)
    tokens = token_issuer()
    engine = args.engine or engine_config.load(secrets=False).address
    tls = load_tls(ca_file=args.ca_file)
    name = args.name or getpass.getuser()
    bots = [f"bot-{BOTS[i]}" for i in range(args.players - 1)]
    async with GameClient(
        engine,
        tokens.renewing(name),  # a game may outlast one token
        retry_for_s=15.0,
        credentials=tls.channel_credentials(),
        options=tls.channel_options(),
    ) as client:
        try:
            created = await client.create_game(args.variant, [name, *bots])
        except RpcFailure as failure:
            console.print(f"[red]refused:[/] {failure.details}")
            return 1
        game = created.game_id
        console.print(f"game {game}: {args.variant}, you ({name}) against {', '.join(bots)}")
        tasks = [
            asyncio.create_task(
                play_paced(engine, tokens.renewing(bot), game, seat, args.pace / 1000, tls=tls)
            )
            for seat, bot in enumerate(bots, start=1)
        ]
        try:
            return await _seat(console, client, game)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


async def _seat(console: Console, client: GameClient, game: str) -> int:
    """Follow seat 0's stream; on each update that offers moves, ask which one and send it."""
    shown_deal_over = 0
    async for update in client.updates(game, 0):
        view = update.view
        if view.phase == gs.PHASE_GAME_OVER:
            console.print(*table_text.result(view), sep="\n")
            console.print(f"replay: meldstream replay {game}")
            return 0
        if view.phase == gs.PHASE_DEAL_OVER and shown_deal_over != view.deal:
            shown_deal_over = view.deal
            console.print(*table_text.result(view), sep="\n")
        if not update.legal_actions:
            continue
        console.rule()
        console.print(*table_text.table(view), sep="\n")
        actions = list(update.legal_actions)
        for number, offered in enumerate(actions, start=1):
            console.print(f" {number:>2}) {table_text.action(offered, view)}")
        while True:
            answer = await asyncio.to_thread(console.input, f"Your move [1-{len(actions)}]: ")
            if answer.strip().isdigit() and 1 <= int(answer) <= len(actions):
                break
            console.print("[yellow]a number from the list, please[/]")
        try:
            await client.submit(game, 0, actions[int(answer) - 1], uuid.uuid4().hex)
        except RpcFailure as failure:
            console.print(f"[red]refused:[/] {failure.details}")
    return 1
