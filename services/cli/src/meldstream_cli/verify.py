"""`meldstream verify GAME`: check a finished game's shuffles against the revealed seed and commitment."""

from __future__ import annotations

import argparse
from typing import Any

from rummy_engine.codec import Logged, event_of, rules_events
from rummy_engine.verify import verify_shuffles

from meldstream_cli.platform_args import add_store_options, config_from, open_log_readonly
from meldstream_cli.reading import game_steps, skipped_line


def register(commands: Any) -> None:
    parser = commands.add_parser("verify", help="verify a finished game's deal against its seed commitment")
    parser.add_argument("game", help="the game id")
    add_store_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    log = open_log_readonly(config_from(args))
    logged: list[Logged] = []
    try:
        for step in game_steps(log, args.game):
            if step.skipped:  # a stray record: the game's own records still verify
                print(skipped_line(step))
            else:
                logged.append(event_of(step.record))
    finally:
        log.close()
    events = rules_events(logged)
    if not events:
        print(f"meldstream verify: no game {args.game!r} in this store")
        return 1
    try:
        result = verify_shuffles(events)
    except ValueError as exc:
        print(f"meldstream verify: {exc}")
        return 1
    print(f"seed            {result.seed.hex()}")
    matches = "matches" if result.commitment_matches else "DOES NOT MATCH"
    print(f"commitment      {result.seed_commitment}  {matches}")
    for check in result.shuffles:
        print(f"{check.name:<15} seq {check.seq:<5} {'matches' if check.matches else 'DOES NOT MATCH'}")
    print("verified" if result.verified else "NOT verified")
    return 0 if result.verified else 1
