"""The terminal in another language: the locale or `--lang` chooses it, the table and the menu read the
catalogue's words with the language's plural forms, and a translation's own `[` is shown, never obeyed
as rich markup."""

from __future__ import annotations

import argparse
import io

import pytest
from meldstream_cli import table_text
from meldstream_cli.language import add_language_option, language
from rich.console import Console
from rummy.game.v1 import events_pb2 as ev
from rummy.game.v1 import game_service_pb2 as gs
from rummy_contracts.catalogue import words

CARD = ev.Card(rank=7, suit=ev.SUIT_HEARTS)


def _view() -> gs.PlayerView:
    seats = [gs.SeatInfo(seat=0, player_id="anna"), gs.SeatInfo(seat=1, player_id="bot-ada")]
    return gs.PlayerView(
        game_id="g",
        variant="kalooki",
        seat=0,
        seats=seats,
        hand=[CARD],
        hand_sizes=[1, 5],
        opened=[False, False],
        totals=[0, 0],
        phase=gs.PHASE_DRAW,
        deal=1,
        discard_top=CARD,
        discard_size=1,
        stock_size=21,
    )


def _printed(lines: list[str]) -> str:
    out = io.StringIO()
    Console(file=out, highlight=False, emoji=False, width=200).print(*lines, sep="\n")
    return out.getvalue()


@pytest.mark.parametrize(
    ("argv", "environment", "lang"),
    [
        ([], {"LANG": "ru_RU.UTF-8"}, "ru"),
        ([], {"LC_ALL": "is_IS.UTF-8", "LANG": "ru_RU.UTF-8"}, "is"),
        ([], {"LANG": "C.UTF-8"}, "en"),
        (["--lang", "hu"], {"LANG": "ru_RU.UTF-8"}, "hu"),
    ],
)
def test_the_language_is_the_option_s_else_the_locale_s(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], environment: dict[str, str], lang: str
) -> None:
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(variable, raising=False)
    for variable, value in environment.items():
        monkeypatch.setenv(variable, value)
    parser = argparse.ArgumentParser()
    add_language_option(parser)
    assert language(parser.parse_args(argv)).lang == lang


def test_the_table_and_the_menu_in_russian_and_in_english() -> None:
    ru, en = words("ru"), words("en")
    table = _printed(table_text.table(_view(), None, ru))
    assert "anna: 1 карта" in table and "bot-ada: 5 карт" in table and "ваши карты: 7♥" in table
    assert "anna: 1 card ·" in _printed(table_text.table(_view(), None, en))  # not "1 cards"
    move = gs.Action(take_discard=gs.TakeDiscard())
    taken = _printed([table_text.action(move, _view(), ru)]).strip()
    assert taken == "Взять из сброса 7♥"  # noqa: RUF001 - Russian, in Cyrillic letters
    assert _printed([table_text.count(ru, "cli.your_move", 3)]).strip() == "Ваш ход [1-3]:"


def test_a_translation_s_brackets_are_text() -> None:
    assert _printed([table_text.say(words("ru"), "table.bot_mark")]).strip() == "[бот]"
    assert _printed([table_text.say(words("en"), "table.bot_mark")]).strip() == "[bot]"
