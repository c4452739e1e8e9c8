"""Entry point of the `meldstream` command: one subcommand per job, each in its own module."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rummy_service.config import ConfigError

from meldstream_cli import conformance, play, replay, run, token, verify, watch


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="meldstream", description="meldstream: online rummy-family card games"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    conformance.register(commands)
    run.register(commands)
    replay.register(commands)
    verify.register(commands)
    token.register(commands)
    play.register(commands)
    watch.register(commands)
    args = parser.parse_args(argv)
    try:
        result: int = args.handler(args)
    except ConfigError as exc:  # a bad setting or an unreadable store: the message says what to do
        raise SystemExit(f"meldstream {args.command}: {exc}") from None
    return result


if __name__ == "__main__":
    sys.exit(main())
