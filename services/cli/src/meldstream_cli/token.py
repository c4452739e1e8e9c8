"""`meldstream token SUBJECT [--role ROLE]`: a token from the development issuer (MELDSTREAM_TOKEN_SECRET)."""

from __future__ import annotations

import argparse
from typing import Any

from rummy_engine import config as engine_config
from rummy_service.auth import PLAYER, ROLES, TokenIssuer


def register(commands: Any) -> None:
    parser = commands.add_parser("token", help="issue a development bearer token")
    parser.add_argument("subject", help="the player id (or the service's or operator's name)")
    parser.add_argument(
        "--role",
        choices=ROLES,
        default=PLAYER,
        help="player: acts for their own seat; service: creates tables for others (matchmaking); "
        "operator: creates tables and reads every finished game",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    issuer = TokenIssuer(engine_config.load().token_secret)
    print(issuer.issue(args.subject, args.role))
    return 0
