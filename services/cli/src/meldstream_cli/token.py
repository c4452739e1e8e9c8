"""`meldstream token --name NAME`: sign in at identity and print an access token, for tools (grpcurl,
scripts) and operators.

The token is printed alone on stdout (for `$(meldstream token --name ops)`), who it names and when it
expires on stderr. Its scopes are the account's (an operator's: operate, watch); it lives for
identity's access token lifetime (10 minutes by default): ask again for another.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from typing import Any

from rummy_service.tls import load_tls

from meldstream_cli.signing_in import add_identity_options, sign_in


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "token",
        help="sign in and print a short-lived access token",
        description="Sign in at the identity service (--name NAME: its password is asked, or read from "
        "MELDSTREAM_PASSWORD; or MELDSTREAM_API_TOKEN) and print an access token for that account.",
    )
    add_identity_options(parser, guest=False)
    parser.add_argument(
        "--ca-file", default="", help="CA of identity's certificate: TLS (default TLS_CA_FILE)"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    signed_in = sign_in(args, load_tls(ca_file=args.ca_file), device="meldstream token", guest=False)
    grant = signed_in.token
    print(grant(), flush=True)
    expires = dt.datetime.fromtimestamp(grant.expires_at, dt.UTC)
    print(
        f"meldstream token: {signed_in.name!r} ({signed_in.player}), expires {expires:%Y-%m-%d %H:%M:%S} UTC",
        file=sys.stderr,
    )
    return 0
