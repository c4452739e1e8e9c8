"""`meldstream verify GAME`: check a finished game's shuffles against the revealed seed and commitment.

`meldstream verify --file FILE` does it without the operator's store, for a player: FILE is a replay
export (`meldstream replay --format json`, docs/replay-export.md) or GetHistory's answer in protobuf's
JSON mapping. Both carry every logged event, so the check is the same.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from meldstream_web.export import event_message
from rummy.game.v1 import events_pb2, game_service_pb2
from rummy_contracts.event_format import Logged, OtherEventFormat, event_from_pb, event_of
from rummy_engine.verify import verify_shuffles

from meldstream_cli.platform_args import add_store_options, config_from, open_log_readonly, wait_for_stores
from meldstream_cli.reading import game_steps, skipped_line


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "verify",
        help="verify a finished game's deal against its seed commitment",
        description="Check that every shuffle of a finished game follows from the seed it revealed, and "
        "that the seed matches the commitment made at its start. Exit 0 when verified. From the store "
        "(GAME), or from a replay export or GetHistory JSON (--file) without it.",
    )
    parser.add_argument("game", nargs="?", help="the game id (in the store)")
    parser.add_argument(
        "--file", type=Path, help="verify a replay export or GetHistory JSON instead, without the store"
    )
    add_store_options(parser)
    parser.set_defaults(handler=run)


def from_file(path: Path) -> list[tuple[int, Logged]]:
    """The logged events of a replay export or of GetHistory's JSON with their seqs; ValueError for
    anything else, and `OtherEventFormat` for GetHistory's events of another event format. A replay
    export's events are of the format its writer read (it reads no other), so they carry none of their
    own; its seed is hex, as everywhere meldstream prints it (base64 in an older export)."""
    doc = json.loads(path.read_text())
    messages: list[events_pb2.GameEvent] = []
    if isinstance(doc, dict) and str(doc.get("format", "")).startswith("meldstream.replay/"):
        for entry in doc["events"]:
            if entry["redacted"] and entry["type"] in ("game_started", "deal_started", "stock_reshuffled"):
                raise ValueError(f"seq {entry['seq']}: this export hides the deck (a seat's or a live view)")
            messages.append(event_message(entry))
    elif isinstance(doc, dict) and "entries" in doc:
        history = json_format.ParseDict(
            doc, game_service_pb2.GetHistoryResponse(), ignore_unknown_fields=True
        )
        messages = [entry.event for entry in history.entries]
    else:
        raise ValueError("neither a replay export (format meldstream.replay/1) nor GetHistory JSON")
    return [(message.seq, event_from_pb(message)) for message in messages]


def run(args: argparse.Namespace) -> int:
    if args.file is not None:
        try:
            return report(from_file(args.file), str(args.file))
        except OtherEventFormat as exc:  # its remedy is a new store; a file's reader needs only the format
            print(f"meldstream verify: {args.file}: {exc.reason}")
            return 1
        except (OSError, ValueError, KeyError, TypeError, json_format.ParseError) as exc:
            print(f"meldstream verify: {args.file}: {exc}")
            return 1
    if args.game is None:
        raise SystemExit("meldstream verify: give a GAME (in the store) or --file FILE")
    config = config_from(args, secrets=False)
    wait_for_stores(config, write=False)
    log = open_log_readonly(config)
    logged: list[tuple[int, Logged]] = []
    try:
        for step in game_steps(log, args.game):
            if step.skipped:  # a stray record: the game's own records still verify
                print(skipped_line(step))
            else:
                logged.append((step.record.seq, event_of(step.record)))
    finally:
        log.close()
    return report(logged, f"game {args.game!r} in this store")


def report(events: list[tuple[int, Logged]], where: str) -> int:
    """Print the check of a game's shuffles, each at its seq as `meldstream replay` numbers it; 0 when
    verified."""
    if not events:
        print(f"meldstream verify: no {where}")
        return 1
    try:
        result = verify_shuffles(events)
    except ValueError as exc:
        print(f"meldstream verify: {exc}")
        return 1
    print(f"seed (hex)      {result.seed.hex()}")
    matches = "matches" if result.commitment_matches else "DOES NOT MATCH"
    print(f"commitment      {result.seed_commitment}  {matches}")
    if any(result.seat_seeds):  # every shuffle used the mix (docs/shuffle.md §1)
        for seat, seed in enumerate(result.seat_seeds):
            print(f"seat {seat} seed     {seed.hex() or '(none)'}")
        print(f"shuffle seed    {result.shuffle_seed.hex()}")
    for check in result.shuffles:
        print(f"{check.name:<15} seq {check.seq:<5} {'matches' if check.matches else 'DOES NOT MATCH'}")
    print("verified" if result.verified else "NOT verified")
    return 0 if result.verified else 1
