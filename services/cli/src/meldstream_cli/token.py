"""`meldstream token SUBJECT [--role ROLE] [--ttl SECONDS]`: a short-lived bearer token, signed with the
platform's secret (MELDSTREAM_TOKEN_SECRET) from this environment.

The token is printed alone on stdout (for `$(meldstream token ann)`), when it expires on stderr. On the
embedded default (no KAFKA_BOOTSTRAP) the development secret signs it, as `meldstream run` uses then.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from typing import Any

from rummy_service.auth import PLAYER, ROLES
from rummy_service.config import TOKEN_TTL_VARIABLE, ConfigError

from meldstream_cli.platform_args import token_issuer


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "token",
        help="print a short-lived bearer token for a player (or service, or operator)",
        description="Print a bearer token signed with MELDSTREAM_TOKEN_SECRET (the development secret "
        "on the embedded default). It expires after --ttl seconds; get a new one then.",
    )
    parser.add_argument("subject", help="the player id (or the service's or operator's name)")
    parser.add_argument(
        "--role",
        choices=ROLES,
        default=PLAYER,
        help="player: acts for their own seat; service: creates tables for others (matchmaking); "
        "operator: creates tables and reads every finished game",
    )
    parser.add_argument(
        "--ttl",
        type=int,
        metavar="SECONDS",
        help=f"lifetime (default {TOKEN_TTL_VARIABLE}, else 3600: an hour)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.ttl is not None and args.ttl <= 0:
        raise ConfigError(f"--ttl {args.ttl} is not a positive number of seconds")
    issuer = token_issuer(args.ttl)
    token = issuer.issue(args.subject, args.role)
    print(token, flush=True)
    expires = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=issuer.ttl_s)
    print(
        f"meldstream token: {args.role} {args.subject!r}, expires {expires:%Y-%m-%d %H:%M:%S} UTC",
        file=sys.stderr,
    )
    return 0
