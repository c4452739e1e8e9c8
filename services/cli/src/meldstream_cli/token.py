"""`meldstream token PLAYER`: a bearer token from the development issuer (MELDSTREAM_TOKEN_SECRET)."""

from __future__ import annotations

import argparse
from typing import Any

from rummy_engine import config as engine_config
from rummy_service.auth import OPERATOR, PLAYER, TokenIssuer


def register(commands: Any) -> None:
    parser = commands.add_parser("token", help="issue a development bearer token for a player or operator")
    parser.add_argument("subject", help="the player id (or the operator's name)")
    parser.add_argument(
        "--operator", action="store_true", help="an operator token (reads finished histories)"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    issuer = TokenIssuer(engine_config.load().token_secret)
    print(issuer.issue(args.subject, OPERATOR if args.operator else PLAYER))
    return 0
