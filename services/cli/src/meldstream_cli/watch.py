"""`meldstream watch GAME`: follow a live game as a spectator (no hand shown), at a pace a person can read:
each move in the words of the web table's log (`rummy_contracts.sentences`), then the table."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from typing import Any

from meldstream_web.game_log import GameLog
from rich.console import Console
from rummy.game.v1 import game_service_pb2 as gs
from rummy_client import GameClient, RpcFailure
from rummy_engine import config as engine_config
from rummy_service.tls import load_tls

from meldstream_cli import table_text
from meldstream_cli.language import add_language_option, language
from meldstream_cli.signing_in import add_identity_options, sign_in


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "watch",
        help="follow a live game as a spectator",
        description="Show a live game move by move as a spectator sees it (no hand shown), until it ends.",
    )
    parser.add_argument("game", help="the game id")
    parser.add_argument("--pace", type=int, default=1000, metavar="MS", help="show one move every MS")
    add_identity_options(parser)
    parser.add_argument("--engine", help="the engine's address (default ENGINE_ADDRESS or 127.0.0.1:50051)")
    parser.add_argument(
        "--ca-file", default="", help="CA of the engine's certificate: TLS (default TLS_CA_FILE)"
    )
    add_language_option(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(_watch(args))
    return 130


async def _watch(args: argparse.Namespace) -> int:
    """Each update as it comes, then a pause: the stream buffers what comes meanwhile, so a fast game is
    shown move by move, never skipped."""
    console = Console(highlight=False)
    w = language(args)
    tls = load_tls(ca_file=args.ca_file)
    token = (await asyncio.to_thread(sign_in, args, tls, device="meldstream watch")).token
    async with GameClient(
        args.engine or engine_config.load(secrets=False).address,
        token,
        credentials=tls.channel_credentials(),
        options=tls.channel_options(),
    ) as client:
        log = GameLog(client, args.game, None, w)
        try:
            async for update in client.updates(args.game):
                view = update.view
                console.rule(w("cli.seq", seq=update.seq))
                # What happened, in the web table's words (the first time: the game so far).
                console.print(*[table_text.plain(line["text"]) for line in await log.upto(update)], sep="\n")
                console.print(*table_text.table(view, None, w), sep="\n")
                if view.phase == gs.PHASE_GAME_OVER:
                    console.print(*table_text.result(view, None, w), sep="\n")
                    return 0
                await asyncio.sleep(args.pace / 1000)
        except RpcFailure as failure:
            console.print(f"[red]{table_text.plain(failure.details)}[/]")
            return 1
    return 0
