"""Entry point of the `meldstream` command: one subcommand per job, each in its own module.

Whatever stops a subcommand short ends in one line on stderr, `meldstream COMMAND: what to fix`, and a
non-zero exit: 1 for a mistake or a failure, 2 for a setting not written in its form (a Redis or store
URL, as argparse exits 2 for a bad option), 130 for Ctrl-C. An error nobody foresaw is one line too,
with its type; LOG_LEVEL=DEBUG shows its traceback instead.

A reader that goes away (`meldstream replay GAME | head`) ends the command quietly with 141, the status
a shell gives `cat` killed by SIGPIPE in the same place; SIGPIPE itself stays ignored, as Python sets
it, so a closed socket in `meldstream run` is an error to handle, never the process's end.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from importlib import metadata

from rummy_service.config import ConfigError, WrongForm

from meldstream_cli import accounts, conformance, health, play, replay, run, token, verify, watch

USAGE = 2
INTERRUPTED = 130
READER_GONE = 128 + signal.SIGPIPE


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
    try:
        try:
            result = _run(parser().parse_args(argv))
        finally:
            sys.stdout.flush()  # here, even on the way out (SystemExit), so a reader gone is seen below
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # what is left unflushed goes nowhere
        return READER_GONE
    return result


def _run(args: argparse.Namespace) -> int:
    try:
        result: int = args.handler(args)
    except BrokenPipeError:
        raise  # the reader gone: `main` ends quietly
    except WrongForm as exc:
        print(f"meldstream {args.command}: {exc}", file=sys.stderr)
        return USAGE
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
