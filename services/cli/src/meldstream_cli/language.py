"""The language the terminal's words are in: `--lang`, else the locale's (LC_ALL, LC_MESSAGES, LANG),
else English; the words themselves are the message catalogue's (`rummy_contracts.catalogue`), the same
as the web table's."""

from __future__ import annotations

import argparse
import os

from rummy_contracts.catalogue import LANGUAGES, Words, environment_language, words


def add_language_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--lang",
        choices=LANGUAGES,
        help="the language of the text (default: the locale's, LC_ALL/LC_MESSAGES/LANG, else en)",
    )


def language(args: argparse.Namespace) -> Words:
    return words(args.lang or environment_language(os.environ))
