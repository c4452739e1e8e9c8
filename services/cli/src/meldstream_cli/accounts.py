"""`meldstream accounts ...`: what operators and bot owners do with accounts, against identity.

    meldstream accounts service-credentials [NAME ...]   # new credentials for services (no identity needed)
    meldstream accounts create-operator --name NAME      # with the admin credential, then its password
    meldstream accounts set-password                     # with a reset link's token (asked)
    meldstream accounts reset-link NAME --name OPS       # an operator issues a one-time reset link
    meldstream accounts suspend|ban|reinstate NAME --reason WHY --name OPS
    meldstream accounts show NAME --name OPS
    meldstream accounts rotate-key --name OPS            # publish a new signing key now
    meldstream accounts legacy-map OLD=ACCOUNT ... --name OPS > map.json   # players of before accounts
    meldstream accounts create-bot NAME --name OWNER     # a bot account of yours
    meldstream accounts create-token [--bot ID] [--scope S ...] [--label L] --name OWNER   # shown once
    meldstream accounts tokens [--bot ID] --name OWNER
    meldstream accounts revoke-token TOKEN_ID [--bot ID] --name OWNER

Who acts is who signs in (`--name` and the password, asked or MELDSTREAM_PASSWORD; or
MELDSTREAM_API_TOKEN), except `create-operator`, which takes the admin credential from
MELDSTREAM_SERVICE_CREDENTIAL: nobody gets an operator account by a default password.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from collections.abc import Callable
from typing import Any

import grpc
from rummy.identity.v1 import identity_pb2 as pb
from rummy_identity import credentials
from rummy_identity.accounts import SERVICE_SCOPES
from rummy_service.config import SERVICE_CREDENTIAL_VARIABLE, ConfigError
from rummy_service.tls import load_tls

from meldstream_cli.signing_in import add_identity_options, identity_client, sign_in

STATUSES = {
    "suspend": pb.ACCOUNT_STATUS_SUSPENDED,
    "ban": pb.ACCOUNT_STATUS_BANNED,
    "reinstate": pb.ACCOUNT_STATUS_ACTIVE,
}


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "accounts",
        help="operators' and bot owners' account tasks, at the identity service",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    tasks = parser.add_subparsers(dest="task", required=True, metavar="TASK")

    def task(name: str, handler: Callable[[argparse.Namespace], int], text: str) -> argparse.ArgumentParser:
        sub: argparse.ArgumentParser = tasks.add_parser(name, help=text, description=text)
        add_identity_options(sub, guest=False)
        sub.add_argument(
            "--ca-file", default="", help="CA of identity's certificate: TLS (default TLS_CA_FILE)"
        )
        sub.set_defaults(handler=lambda args: _answered(handler, args))
        return sub

    issue = tasks.add_parser(
        "service-credentials",
        help="print new credentials for services, and identity's setting with their hashes",
        description="Print a new credential for each named service (default: all) as "
        "NAME_SERVICE_CREDENTIAL=..., for that service's MELDSTREAM_SERVICE_CREDENTIAL only, and "
        "IDENTITY_SERVICE_CREDENTIALS=... with their hashes, for identity. Needs no running service.",
    )
    issue.add_argument("services", nargs="*", choices=[[], *SERVICE_SCOPES], metavar="NAME")
    issue.set_defaults(handler=_service_credentials)
    task(
        "create-operator",
        _create_operator,
        "create an operator account (admin credential) and set its password",
    )
    task("set-password", _set_password, "set a password with a reset link's token (asked)")
    reset = task("reset-link", _reset_link, "issue a one-time password reset link for an account (operators)")
    reset.add_argument("account", help="the account name")
    for verb in STATUSES:
        status = task(verb, _set_status, f"{verb} an account (operators)")
        status.add_argument("account", help="the account name")
        status.add_argument("--reason", default="", help="why, kept with the account for other operators")
    show = task("show", _show, "show an account (operators)")
    show.add_argument("account", help="the account name")
    task("rotate-key", _rotate_key, "publish a new signing key now (operators)")
    legacy = task(
        "legacy-map",
        _legacy_map,
        "print the JSON map of player ids of before accounts to the accounts their players have now "
        "(for scoring's SCORING_LEGACY_IDS; operators)",
    )
    legacy.add_argument("pairs", nargs="+", metavar="OLD_PLAYER_ID=ACCOUNT_NAME")
    bot = task("create-bot", _create_bot, "create a bot account owned by you")
    bot.add_argument("bot_name", help="the bot's account name")
    bot.add_argument("--display-name", default="", help="the name shown at tables")
    create = task("create-token", _create_token, "create a personal API token (shown once)")
    create.add_argument("--bot", default="", help="one of your bots' account id (default: yourself)")
    create.add_argument(
        "--scope", action="append", default=[], help="bot:play, watch (a bot), play, watch (you)"
    )
    create.add_argument("--label", default="", help="to recognise it by in the list")
    listed = task("tokens", _tokens, "list your (or your bot's) personal API tokens")
    listed.add_argument("--bot", default="", help="one of your bots' account id")
    revoke = task("revoke-token", _revoke_token, "revoke a personal API token")
    revoke.add_argument("token_id")
    revoke.add_argument("--bot", default="", help="one of your bots' account id")


def _answered(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    try:
        return handler(args)
    except grpc.RpcError as error:
        details = error.details() or error.code().name
        raise SystemExit(f"meldstream accounts {args.task}: identity refused: {details}") from None


def _call(args: argparse.Namespace, method: str, request: Any) -> Any:
    """One call as the account this command signs in as."""
    tls = load_tls(ca_file=args.ca_file)
    me = sign_in(args, tls, device=f"meldstream accounts {args.task}", guest=False)
    return identity_client(args, tls).call(method, request, me.token)


def _service_credentials(args: argparse.Namespace) -> int:
    issued = credentials.service_credentials(args.services or SERVICE_SCOPES)
    for name, secret in issued.items():
        print(f"{name.upper()}_SERVICE_CREDENTIAL={secret}")
    hashes = ",".join(f"{name}={digest.hex()}" for name, digest in credentials.hashes(issued).items())
    print(f"IDENTITY_SERVICE_CREDENTIALS={hashes}")
    print(
        "meldstream accounts: give each NAME_SERVICE_CREDENTIAL to that service alone (its "
        f"{SERVICE_CREDENTIAL_VARIABLE}), and IDENTITY_SERVICE_CREDENTIALS to identity; the admin one "
        "to whoever creates operators",
        file=sys.stderr,
    )
    return 0


def _new_password() -> str:
    password = os.environ.get("MELDSTREAM_NEW_PASSWORD", "")
    if password:
        return password
    if not sys.stdin.isatty():
        raise ConfigError("no terminal to ask the new password on: set MELDSTREAM_NEW_PASSWORD")
    first = getpass.getpass("new password (10 characters or more): ")
    if getpass.getpass("the same again: ") != first:
        raise ConfigError("the two passwords differ: nothing was changed")
    return first


def _reset(args: argparse.Namespace, token: str) -> int:
    client = identity_client(args, load_tls(ca_file=args.ca_file))
    request = pb.ResetPasswordRequest(reset_token=token, new_password=_new_password())
    name = client.call("ResetPassword", request).name
    print(f"meldstream accounts: {name}'s password is set: sign in with it", file=sys.stderr)
    return 0


def _create_operator(args: argparse.Namespace) -> int:
    admin = os.environ.get(SERVICE_CREDENTIAL_VARIABLE, "")
    if not args.name:
        raise ConfigError("name the operator account: --name NAME")
    if not admin:
        raise ConfigError(f"{SERVICE_CREDENTIAL_VARIABLE} must hold the admin service credential")
    client = identity_client(args, load_tls(ca_file=args.ca_file))
    link = client.call(
        "CreateOperator", pb.CreateOperatorRequest(name=args.name), client.api_token(admin)
    ).link
    print(
        f"meldstream accounts: operator {link.account.name} created ({link.account.account_id})",
        file=sys.stderr,
    )
    if sys.stdin.isatty() or os.environ.get("MELDSTREAM_NEW_PASSWORD"):
        return _reset(args, link.reset_token)
    print(link.reset_token)
    print(
        "meldstream accounts: set its password with `meldstream accounts set-password` and this token",
        file=sys.stderr,
    )
    return 0


def _set_password(args: argparse.Namespace) -> int:
    token = os.environ.get("MELDSTREAM_RESET_TOKEN") or getpass.getpass("reset link token: ")
    return _reset(args, token.strip())


def _reset_link(args: argparse.Namespace) -> int:
    link = _call(args, "IssueResetLink", pb.IssueResetLinkRequest(name=args.account))
    print(link.reset_token)
    print(
        f"meldstream accounts: a one-time reset link for {link.account.name}, valid until {link.expires_at}",
        file=sys.stderr,
    )
    return 0


def _set_status(args: argparse.Namespace) -> int:
    request = pb.SetAccountStatusRequest(name=args.account, status=STATUSES[args.task], reason=args.reason)
    account = _call(args, "SetAccountStatus", request).account
    print(f"{account.name}: {pb.AccountStatus.Name(account.status).removeprefix('ACCOUNT_STATUS_').lower()}")
    return 0


def _show(args: argparse.Namespace) -> int:
    print(_call(args, "GetAccount", pb.GetAccountRequest(name=args.account)).account, end="")
    return 0


def _rotate_key(args: argparse.Namespace) -> int:
    rotated = _call(args, "RotateSigningKey", pb.RotateSigningKeyRequest())
    print(f"signing key {rotated.kid} published; it signs from {rotated.signs_from} (Unix seconds)")
    return 0


def _legacy_map(args: argparse.Namespace) -> int:
    pairs = [pair.partition("=") for pair in args.pairs]
    for old, equals, account in pairs:
        if not equals or not old or not account:
            raise ConfigError(f"{(old + equals + account)[:60]!r} is not OLD_PLAYER_ID=ACCOUNT_NAME")
    tls = load_tls(ca_file=args.ca_file)
    me = sign_in(args, tls, device="meldstream accounts legacy-map", guest=False)
    client = identity_client(args, tls)
    found: dict[str, str] = {}
    for old, _, account in pairs:
        found[old] = client.call(
            "GetAccount", pb.GetAccountRequest(name=account), me.token
        ).account.account_id
    print(json.dumps(found, indent=2, sort_keys=True))
    return 0


def _create_bot(args: argparse.Namespace) -> int:
    request = pb.CreateBotAccountRequest(name=args.bot_name, display_name=args.display_name)
    account = _call(args, "CreateBotAccount", request).account
    print(f"bot {account.name}: account id {account.account_id}")
    return 0


def _create_token(args: argparse.Namespace) -> int:
    request = pb.CreateApiTokenRequest(account_id=args.bot, scopes=args.scope, label=args.label)
    created = _call(args, "CreateApiToken", request)
    print(created.api_token)
    print(
        f"meldstream accounts: token {created.token.token_id} ({' '.join(created.token.scopes)}): "
        "shown once, keep it secret (MELDSTREAM_API_TOKEN)",
        file=sys.stderr,
    )
    return 0


def _tokens(args: argparse.Namespace) -> int:
    for token in _call(args, "ListApiTokens", pb.ListApiTokensRequest(account_id=args.bot)).tokens:
        print(f"{token.token_id}  {' '.join(token.scopes):<16} {token.label}")
    return 0


def _revoke_token(args: argparse.Namespace) -> int:
    _call(args, "RevokeApiToken", pb.RevokeApiTokenRequest(account_id=args.bot, token_id=args.token_id))
    print(f"token {args.token_id} revoked")
    return 0
