"""`meldstream health [ADDRESS] [--service NAME]`: ask a service's gRPC health (grpc.health.v1) once.

Exit status 0 when it answers SERVING, 1 with one line otherwise: a check by hand, and the image's
HEALTHCHECK (deploy/service.Dockerfile), which runs it as `python -m meldstream_cli.health` every few
seconds: that imports only this module, not every subcommand's. Over TLS when TLS_CA_FILE (or
--ca-file) names the CA of the service's certificate; with mutual TLS, the process's own TLS_CERT_FILE
goes along.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Final

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from rummy_service.config import ConfigError, address_setting, check_address
from rummy_service.tls import load_tls

SERVICES: Final = {
    "engine": ("ENGINE_ADDRESS", "127.0.0.1:50051"),
    "matchmaking": ("MATCHMAKING_ADDRESS", "127.0.0.1:50052"),
    "scoring": ("SCORING_ADDRESS", "127.0.0.1:50053"),
    "identity": ("IDENTITY_ADDRESS", "127.0.0.1:50054"),
}
WILDCARDS: Final = {"0.0.0.0": "127.0.0.1", "[::]": "[::1]"}  # listen everywhere: ask on loopback


DESCRIPTION: Final = (
    "Ask grpc.health.v1 Check at ADDRESS, or where the --service listens (its *_ADDRESS variable; "
    "0.0.0.0 is asked on 127.0.0.1). Exit 0 when SERVING, 1 otherwise."
)


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "health", help="ask a service's gRPC health once (exit 0 when SERVING)", description=DESCRIPTION
    )
    _arguments(parser)
    parser.set_defaults(handler=run)


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("address", nargs="?", help="HOST:PORT of the service (default: --service's address)")
    parser.add_argument(
        "--service",
        choices=SERVICES,
        default="engine",
        help="whose address to ask when no ADDRESS is given: ENGINE_ADDRESS, MATCHMAKING_ADDRESS, "
        "SCORING_ADDRESS or IDENTITY_ADDRESS (default engine)",
    )
    parser.add_argument(
        "--ca-file", default="", help="CA of the service's certificate: TLS (default TLS_CA_FILE)"
    )
    parser.add_argument("--timeout", type=float, default=3.0, metavar="S", help="seconds to wait (default 3)")


def main() -> int:
    """`python -m meldstream_cli.health`: `meldstream health` with only this module's imports."""
    parser = argparse.ArgumentParser(prog="python -m meldstream_cli.health", description=DESCRIPTION)
    _arguments(parser)
    try:
        return run(parser.parse_args())
    except ConfigError as exc:
        print(f"meldstream health: {exc}", file=sys.stderr)
        return 1


def run(args: argparse.Namespace) -> int:
    if args.address:
        check_address(args.address, "ADDRESS")
        address = args.address
    else:
        variable, default = SERVICES[args.service]
        host, _, port = address_setting(variable, default).rpartition(":")
        address = f"{WILDCARDS.get(host, host)}:{port}"
    tls = load_tls(ca_file=args.ca_file)
    credentials = tls.channel_credentials()
    channel = (
        grpc.insecure_channel(address)
        if credentials is None
        else grpc.secure_channel(address, credentials, options=tls.channel_options())
    )
    with channel:
        stub: Any = health_pb2_grpc.HealthStub(channel)
        try:
            reply = stub.Check(health_pb2.HealthCheckRequest(), timeout=args.timeout)
        except grpc.RpcError as error:
            print(f"meldstream health: {address}: {_why(error)}", file=sys.stderr)
            return 1
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
    print(f"{address}: {status}")
    return 0 if reply.status == health_pb2.HealthCheckResponse.SERVING else 1


def _why(error: grpc.RpcError) -> str:
    code: grpc.StatusCode = error.code()
    details = str(error.details() or "").partition("\n")[0]
    if code == grpc.StatusCode.UNAVAILABLE:  # gRPC's details end in the cause: "Connection refused"
        cause = details.rpartition(": ")[2].lower() or "unavailable"
        return f"no answer ({cause}): is it running there, and is TLS (--ca-file) as it serves?"
    return f"{code.name}: {details}"


if __name__ == "__main__":
    sys.exit(main())
