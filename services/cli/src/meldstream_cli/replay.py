"""`meldstream replay GAME [--to SEQ]`: every step of a game as a table: hands, melds, discard pile.

An operator's tool: it reads the event log directly (every hand is shown, game over or not). A record
that does not fit the game (garbage, another event format, a seq out of place) is shown as skipped and
the replay goes on, as the engine folds the game.
"""

from __future__ import annotations

import argparse
from typing import Any

from rummy_engine.codec import Logged, event_of
from rummy_engine.facts import Fact, TableSeated
from rummy_rules.cards import format_cards
from rummy_rules.state import GameState

from meldstream_cli.platform_args import add_store_options, config_from, open_log_readonly
from meldstream_cli.reading import game_steps, skipped_line


def register(commands: Any) -> None:
    parser = commands.add_parser("replay", help="print a game step by step (hands, melds, discard pile)")
    parser.add_argument("game", help="the game id")
    parser.add_argument("--to", type=int, metavar="SEQ", help="stop after this sequence number")
    add_store_options(parser)
    parser.set_defaults(handler=run)


def describe(event: Logged) -> str:
    fields = []
    for name in type(event).__slots__:
        if name in ("deck", "seed", "cards") and isinstance(getattr(event, name), tuple | bytes):
            value = getattr(event, name)
            fields.append(f"{name}=[{len(value)}]" if name != "cards" else f"cards={format_cards(value)}")
            continue
        value = getattr(event, name)
        if hasattr(value, "cards"):
            value = format_cards(value.cards)
        elif isinstance(value, tuple) and value and hasattr(value[0], "cards"):
            value = " | ".join(format_cards(meld.cards) for meld in value)
        elif hasattr(value, "text"):
            value = value.text
        fields.append(f"{name}={value}")
    return f"{type(event).__name__}({', '.join(fields)})"


def table(state: GameState, players: tuple[str, ...]) -> list[str]:
    width = max(len(p) for p in players) + 8
    lines = []
    for seat, hand in enumerate(state.hands):
        mark = ">" if seat == state.turn else " "
        label = f"{seat} {players[seat]}"
        lines.append(f"  {mark} {label:<{width}} {len(hand):>2} | {format_cards(sorted(hand)) or '-'}")
    for index, (meld, owner) in enumerate(zip(state.melds, state.owners, strict=True)):
        lines.append(f"    meld {index:<2} (seat {owner}) {format_cards(meld.cards)}")
    pile = format_cards(state.discard[-8:]) if state.discard else "-"
    more = f"{len(state.discard) - 8} more under " if len(state.discard) > 8 else ""
    lines.append(
        f"    discard: {more}{pile} (top last)   stock: {len(state.stock)}   phase: {state.phase.value}"
    )
    lines.append(f"    totals: {list(state.totals)}")
    return lines


def run(args: argparse.Namespace) -> int:
    log = open_log_readonly(config_from(args))
    try:
        shown = 0
        for step in game_steps(log, args.game):
            record, state = step.record, step.state
            if step.skipped:
                print(skipped_line(step))
                continue
            if args.to is not None and record.seq > args.to:
                break
            assert state is not None  # a record applied: the game has started
            event = event_of(record)
            who = (
                " (played by the engine: the player was absent)" if state.by_engine(record.command_id) else ""
            )
            print(f"seq {record.seq}: {describe(event)}{who}")
            shown += 1
            # Facts change no cards, except that TableSeated gives the dealt hands their players' names.
            if state.table.players and (isinstance(event, TableSeated) or not isinstance(event, Fact)):
                print("\n".join(table(state.game, state.table.players)))
        if not shown:
            print(f"meldstream replay: no game {args.game!r} in this store")
            return 1
        return 0
    finally:
        log.close()
