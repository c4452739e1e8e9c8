"""Entry point of the `meldstream` command: one subcommand per job, each in its own module."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from meldstream_cli import conformance, replay, run, token, verify


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
    args = parser.parse_args(argv)
    result: int = args.handler(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
