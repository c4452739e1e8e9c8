"""`meldstream replay GAME`: a summary, then every event with its time and the table after it.

An operator's tool reading the event log directly. `--seat N` shows one player's view, `--deal K`
and `--from/--to` narrow the events shown (the summary stays the whole game's), `--format json`
writes the export (docs/replay-export.md), `--html FILE` a page that steps through the game. An
unfinished game's hidden hands and stock are shown only with `--operator`, which the output says. A
record that does not fit the game (garbage, another event format, a seq out of place) is listed as
skipped and the replay goes on, as the engine folds the game.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from meldstream_web.export import game_export
from rummy_contracts.catalogue import Words
from rummy_engine import refusals
from rummy_service.errors import quote
from rummy_service.limits import DISPLAY_NAME
from rummy_service.text import printable, shown

from meldstream_cli import replay_html
from meldstream_cli.language import add_language_option, language
from meldstream_cli.platform_args import (
    add_store_options,
    config_from,
    open_log_readonly,
    open_refusals_readonly,
    wait_for_stores,
)
from meldstream_cli.reading import game_steps
from meldstream_cli.replay_text import (
    event_line,
    for_people,
    narrator,
    refused_after,
    refused_line,
    shows_table,
    skipped_line,
    summary_lines,
    table_lines,
)


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "replay",
        help="a game's summary and every event with its time (text, JSON export or HTML page)",
        description="Print a game from the store (the embedded one in --data-dir, or Kafka with --kafka "
        "and --redis): its summary, then every event with the table after it. Reads only; a read-only "
        "store is read from a private copy.",
    )
    parser.add_argument("game", help="the game id")
    parser.add_argument("--seat", type=int, metavar="N", help="one player's view: only seat N's hand")
    parser.add_argument("--deal", type=int, metavar="K", help="only the events of deal K")
    parser.add_argument("--from", dest="first", type=int, metavar="SEQ", help="start at this sequence number")
    parser.add_argument("--to", type=int, metavar="SEQ", help="stop after this sequence number")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="text (default) or json")
    parser.add_argument("--html", type=Path, metavar="FILE", help="also write a self-contained HTML page")
    parser.add_argument(
        "--operator",
        action="store_true",
        help="show an unfinished game's hidden hands and stock (an operator's view; the output says so)",
    )
    add_store_options(parser)
    add_language_option(parser)
    parser.set_defaults(handler=run)


def selected(doc: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """The document with only the events the filters keep (the summary stays the whole game's)."""
    events = [
        entry
        for entry in doc["events"]
        if (args.deal is None or entry["state"]["deal"] == args.deal)
        and (args.first is None or entry["seq"] >= args.first)
        and (args.to is None or entry["seq"] <= args.to)
    ]
    return {**doc, "events": events}


def run(args: argparse.Namespace) -> int:
    config = config_from(args, secrets=False)
    wait_for_stores(config, write=False)
    log = open_log_readonly(config)
    try:
        doc = game_export(args.game, game_steps(log, args.game), seat=args.seat, operator=args.operator)
    finally:
        log.close()
    refused_log = open_refusals_readonly(config)
    if doc is not None and refused_log is not None:
        try:
            doc["refused"] = refusals.read(refused_log, args.game)
        finally:
            refused_log.close()
    if doc is None:
        print(f"meldstream replay: no game {quote(args.game)} in this store", file=sys.stderr)
        return 1
    doc = selected(doc, args)
    if args.html is not None:
        args.html.write_text(replay_html.render(doc))
    if args.format == "json":
        json.dump(doc, sys.stdout, indent=1)
        print()
        return 0
    _print_text(for_people(doc, lambda player: shown(player, DISPLAY_NAME)), language(args))
    return 0


def _print_text(doc: dict[str, Any], say: Words) -> None:
    """The text replay; every line made printable, for what the log holds is what clients sent. The
    events and the table are in `say`'s language; the summary stays in English, an operator's record."""

    def out(*lines: str) -> None:
        for line in lines:
            print(printable(line))

    out(*summary_lines(doc), "")
    skipped = list(doc["skipped"])  # in log order, each before the events from its seq on
    words = narrator(doc, say)
    for entry in doc["events"]:
        while skipped and skipped[0]["seq"] <= entry["seq"]:
            out(skipped_line(skipped.pop(0)))
        out(event_line(words, entry))
        if shows_table(entry):
            out(*table_lines(doc, entry, say))
        for refused in refused_after(doc, entry["seq"]):
            out(refused_line(doc, refused))
    out(*map(skipped_line, skipped))
