"""`meldstream play VARIANT [--players N]`: a game against bots in the terminal, on the running platform.

The player is a client like any other: signed in at identity (`--name` and its password, or a guest),
CreateGame for a table of the player and the house bots, the seat's stream, and the engine's legal
actions as a numbered menu. The house bots are the SDK's, in this process, playing with the player's
own token (a table's creator may play its house bots), each waiting `--pace` ms before a move so the
player can follow them, and holding a card on offer (contract rummy) until the player buys or passes.
`--short` plays the variant's
shortest match (as the web lobby's "short" does).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import uuid
from typing import Any

from meldstream_web.bots import BuyWindows, play_paced
from meldstream_web.game_log import GameLog
from meldstream_web.quickplay import SHORT_MATCH, short_options
from rich.console import Console
from rummy.game.v1 import game_service_pb2 as gs
from rummy_client import GameClient, RpcFailure
from rummy_contracts.catalogue import Words
from rummy_contracts.house import NAMES, house_bots
from rummy_contracts.wire import OUT_OF_TURN_KINDS
from rummy_engine import config as engine_config
from rummy_service.limits import PLAYER_ID
from rummy_service.tls import Tls, load_tls

from meldstream_cli import table_text
from meldstream_cli.language import add_language_option, language
from meldstream_cli.prompt import Lines, clock
from meldstream_cli.signing_in import SignedIn, add_identity_options, sign_in


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "play",
        help="play a game against bots in the terminal",
        description="Create a table of you and the house bots on a running engine and play it from a "
        "numbered menu of your legal moves. Needs the platform running (meldstream run).",
    )
    parser.add_argument("variant", help="kalooki, rummy40, rummy500 or contract")
    parser.add_argument("--players", type=int, default=2, metavar="N", help="table size, you and N-1 bots")
    add_identity_options(parser)
    parser.add_argument("--pace", type=int, default=600, metavar="MS", help="bots wait MS before each move")
    short = "; ".join(f"{variant} {text}" for variant, (_, text) in SHORT_MATCH.items())
    parser.add_argument("--short", action="store_true", help=f"the variant's short match ({short})")
    parser.add_argument("--engine", help="the engine's address (default ENGINE_ADDRESS or 127.0.0.1:50051)")
    parser.add_argument(
        "--ca-file", default="", help="CA of the engine's certificate: TLS (default TLS_CA_FILE)"
    )
    add_language_option(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if not 2 <= args.players <= len(NAMES) + 1:
        raise SystemExit(f"meldstream play: --players is 2 to {len(NAMES) + 1}")
    if len(args.name) > PLAYER_ID:  # refused here, before anything is asked of identity
        raise SystemExit(f"meldstream play: --name is at most {PLAYER_ID} characters, not {len(args.name)}")
    try:
        tls = load_tls(ca_file=args.ca_file)
        # Signed in before the loop, in this thread: Ctrl-C at the password prompt ends it at once
        # and getpass turns the echo back on (asked in a worker thread, it waited for Enter).
        me = sign_in(args, tls, device="meldstream play")
        return asyncio.run(_play(args, tls, me))
    except KeyboardInterrupt:  # at once, even at a prompt (meldstream_cli.prompt)
        print()  # the shell's prompt on a line of its own, not after ours
        return 130


def terminal(**options: Any) -> Console:
    """The console `play` writes to. Names enter its markup only as `table_text.plain` text, but rich
    also turns `:smile:` codes into emoji outside markup: off (`emoji=False`), so a name reads as
    typed; no highlighting either (it would colour the digits and quotes of a name)."""
    return Console(highlight=False, emoji=False, **options)


async def _play(args: argparse.Namespace, tls: Tls, me: SignedIn) -> int:
    console = terminal()
    w = language(args)
    engine = args.engine or engine_config.load(secrets=False).address
    bots = house_bots(args.players)
    windows = BuyWindows()
    async with GameClient(
        engine,
        me.token,  # renewed before it expires: a game may outlast one token
        retry_for_s=15.0,
        credentials=tls.channel_credentials(),
        options=tls.channel_options(),
    ) as client:
        try:
            options = short_options(args.variant) if args.short else {}
            created = await client.create_game(args.variant, [me.player, *bots], options=options)
        except RpcFailure as failure:
            console.print(f"[red]{table_text.say(w, 'cli.refused')}[/] {table_text.plain(failure.details)}")
            return 1
        game = created.game_id
        you = table_text.name(me.name)
        console.print(
            table_text.say(
                w,
                "cli.play_start",
                game=game,
                variant=table_text.plain(args.variant),
                you=you,
                bots=", ".join(bots),
            )
        )
        tasks = [
            asyncio.create_task(
                play_paced(engine, me.token, game, seat, args.pace / 1000, windows=windows, tls=tls)
            )
            for seat in range(1, args.players)
        ]
        try:
            return await _seat(console, client, game, windows, {me.player: me.name}, w=w)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


async def _seat(
    console: Console,
    client: GameClient,
    game: str,
    windows: BuyWindows,
    shown: dict[str, str],
    *,
    w: Words = table_text.ENGLISH,
) -> int:
    """Follow seat 0's stream: print each move as it happens (the others' too, in the web table's words),
    and on each update that offers moves, ask which one and send it."""
    shown_deal_over = 0
    seeded = False
    lines = Lines(sys.stdin.fileno())
    log = GameLog(client, game, 0, w)
    async for update in client.updates(game, 0):
        view = update.view
        if not seeded:  # a random seed of the seat's own, before the first deal (docs/shuffle.md)
            seeded = True
            if await client.offer_seed(game, 0, view):
                console.print("  you sent a random seed for the shuffle")
        for line in await log.upto(update):
            console.print(f"  {table_text.plain(line['text'])}")
        if view.phase == gs.PHASE_GAME_OVER:
            console.print(*table_text.result(view, shown, w), sep="\n")
            console.print(table_text.say(w, "cli.replay_hint", game=game))
            return 0
        if view.phase == gs.PHASE_DEAL_OVER and shown_deal_over != view.deal:
            shown_deal_over = view.deal
            console.print(*table_text.result(view, shown, w), sep="\n")
        if not update.legal_actions:
            continue
        console.rule()
        console.print(*table_text.table(view, shown, w), sep="\n")
        actions = table_text.menu_order(update.legal_actions)
        for number, offered in enumerate(actions, start=1):
            console.print(f" {number:>2}) {table_text.action(offered, view, w)}")
        while True:
            answer = await lines.ask(
                console, clock(view, w) + table_text.count(w, "cli.your_move", len(actions))
            )
            if answer.strip().isdigit() and 1 <= int(answer) <= len(actions):
                break
            console.print(f"[yellow]{table_text.say(w, 'cli.number_please')}[/]")
        chosen = actions[int(answer) - 1]
        try:
            await client.submit(game, 0, chosen, uuid.uuid4().hex)
        except RpcFailure as failure:
            console.print(f"[red]{table_text.say(w, 'cli.refused')}[/] {table_text.plain(failure.details)}")
        if chosen.WhichOneof("kind") in OUT_OF_TURN_KINDS:
            windows.answered(game)  # the bot holding the card for you draws now
    return 1
