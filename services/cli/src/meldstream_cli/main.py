"""Entry point of the `meldstream` command: one subcommand per job, each in its own module.

Whatever stops a subcommand short ends in one line on stderr, `meldstream COMMAND: what to fix`, and a
non-zero exit: 1 for a mistake or a failure, 130 for Ctrl-C. An error nobody foresaw is one line too,
with its type; LOG_LEVEL=DEBUG shows its traceback instead.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib import metadata

from rummy_service.config import ConfigError

from meldstream_cli import accounts, conformance, health, play, replay, run, token, verify, watch

INTERRUPTED = 130


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="meldstream",
        description="meldstream: online rummy-family card games. `meldstream COMMAND --help` for each.",
    )
    top.add_argument("--version", action="version", version=f"meldstream {metadata.version('meldstream')}")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    conformance.register(commands)
    run.register(commands)
    replay.register(commands)
    verify.register(commands)
    token.register(commands)
    accounts.register(commands)
    health.register(commands)
    play.register(commands)
    watch.register(commands)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        result: int = args.handler(args)
    except ConfigError as exc:  # a bad setting or an unreadable store: the message says what to do
        raise SystemExit(f"meldstream {args.command}: {exc}") from None
    except KeyboardInterrupt:
        print(f"meldstream {args.command}: interrupted", file=sys.stderr)
        return INTERRUPTED
    except Exception as exc:
        if os.environ.get("LOG_LEVEL", "").upper() == "DEBUG":
            raise
        first = str(exc).partition("\n")[0]
        raise SystemExit(f"meldstream {args.command}: failed: {type(exc).__name__}: {first}") from None
    return result


if __name__ == "__main__":
    sys.exit(main())
