"""How the terminal commands sign in: an account (its password asked, or MELDSTREAM_PASSWORD), a
personal API token (MELDSTREAM_API_TOKEN), or a guest; then an access token kept fresh for the run.

The password is read from the terminal without echo, never from an option (it would stay in the
shell's history and in `ps`).
"""

from __future__ import annotations

import argparse
import getpass
import os
from dataclasses import dataclass

import grpc
from rummy.identity.v1 import identity_pb2 as pb
from rummy_client.identity import IdentityClient, RenewingToken
from rummy_service.public_keys import DEFAULT_IDENTITY, IDENTITY_VARIABLE
from rummy_service.tls import Tls

PASSWORD_VARIABLE = "MELDSTREAM_PASSWORD"
API_TOKEN_VARIABLE = "MELDSTREAM_API_TOKEN"


@dataclass(frozen=True, slots=True)
class SignedIn:
    player: str  # the account id: the player id at tables
    name: str  # the name shown
    token: RenewingToken


def add_identity_options(parser: argparse.ArgumentParser, *, guest: bool = True) -> None:
    parser.add_argument(
        "--identity",
        help=f"the identity service's address (default {IDENTITY_VARIABLE} or {DEFAULT_IDENTITY})",
    )
    who = "sign in as this account (its password is asked, or read from MELDSTREAM_PASSWORD)"
    parser.add_argument("--name", default="", help=who + ("; default: a guest" if guest else ""))


def identity_client(args: argparse.Namespace, tls: Tls) -> IdentityClient:
    address = args.identity or os.environ.get(IDENTITY_VARIABLE) or DEFAULT_IDENTITY
    return IdentityClient(address, credentials=tls.channel_credentials(), options=tls.channel_options())


def sign_in(args: argparse.Namespace, tls: Tls, *, device: str, guest: bool = True) -> SignedIn:
    """The session this command runs with; `SystemExit` with what to do when identity refuses."""
    client = identity_client(args, tls)
    try:
        api_token = os.environ.get(API_TOKEN_VARIABLE, "")
        if api_token and not args.name:
            token = client.api_token(api_token)
            token()  # exchanged now: a revoked token is said here, not at the first move
            account = client.call("GetAccount", pb.GetAccountRequest(), token).account
            return SignedIn(account.account_id, account.display_name, token)
        if args.name:
            password = os.environ.get(PASSWORD_VARIABLE) or getpass.getpass(f"password for {args.name}: ")
            session = client.sign_in(args.name, password, device=device)
        elif guest:
            session = client.guest()
        else:
            raise SystemExit("meldstream: name the account to sign in as (--name NAME)")
    except grpc.RpcError as error:
        details = error.details() or error.code().name
        raise SystemExit(f"meldstream: identity at {client.target} refused: {details}") from None
    return SignedIn(session.account.account_id, session.account.display_name, client.session_token(session))
