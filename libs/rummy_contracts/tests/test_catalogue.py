"""The message catalogue: every language has every message of English, with the same placeholders and
the plural forms its CLDR rule needs; plural forms are chosen by CLDR's rule (checked against CLDR's own
examples); the log in words reads in each language."""

from __future__ import annotations

import pytest
from rummy.game.v1 import events_pb2
from rummy_contracts import event_format, sight
from rummy_contracts.catalogue import (
    DEFAULT,
    LANGUAGES,
    PLACEHOLDER,
    language_of,
    plural_categories,
    raw,
    words,
)
from rummy_contracts.facts import TableSeated, TurnTimedOut
from rummy_contracts.sentences import Narrator
from rummy_rules.cards import parse_cards
from rummy_rules.events import CardDrawn

ENGLISH = raw(DEFAULT)


def _placeholders(message: str | dict[str, str]) -> set[str]:
    texts = message.values() if isinstance(message, dict) else [message]
    return {name for text in texts for name in PLACEHOLDER.findall(text)}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_language_has_every_message_with_its_placeholders_and_plural_forms(lang: str) -> None:
    messages = raw(lang)
    assert set(messages) == set(ENGLISH)
    for key, english in ENGLISH.items():
        message = messages[key]
        assert isinstance(message, dict) == isinstance(english, dict), key
        assert _placeholders(message) == _placeholders(english), key
        if isinstance(message, dict):
            assert set(message) == plural_categories(lang), key


# CLDR's own examples of each category (the "@integer" samples of CLDR's plurals.xml).
CLDR_EXAMPLES = {
    "en": {"one": [1], "other": [0, 2, 3, 10, 11, 21, 100]},
    "hu": {"one": [1], "other": [0, 2, 16, 100, 1000]},
    "ru": {
        "one": [1, 21, 31, 41, 51, 61, 71, 81, 101, 1001],
        "few": [2, 3, 4, 22, 23, 24, 32, 33, 34, 1002],
        "many": [0, 5, 6, 11, 12, 13, 14, 19, 20, 100, 111, 112, 1000],
    },
    "is": {"one": [1, 21, 31, 41, 51, 61, 71, 81, 101, 1001], "other": [0, 2, 11, 12, 16, 100, 111, 1000]},
}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_plural_forms_follow_cldr(lang: str) -> None:
    say = words(lang)
    for category, numbers in CLDR_EXAMPLES[lang].items():
        assert {say.category(n) for n in numbers} == {category}, category
    assert set(CLDR_EXAMPLES[lang]) | {"other"} == plural_categories(lang)


def test_russian_has_three_forms_and_icelandic_its_own() -> None:
    assert plural_categories("ru") == {"one", "few", "many", "other"}
    assert words("ru").count("seat.cards", 5) == "5 карт"
    assert [words("ru").count("seat.cards", n) for n in (1, 3, 21)] == ["1 карта", "3 карты", "21 карта"]
    assert words("en").count("seat.cards", 21) == "21 cards"
    assert words("is").count("lobby.rating_value", 21, rating="1.00") == "1.00 (21 leikur)"  # 21 is "one"


def test_the_language_comes_from_a_locale_and_a_stranger_is_english() -> None:
    assert language_of(["ru_RU.UTF-8"]) == "ru"
    assert language_of(["de_DE", "hu-HU"]) == "hu"
    assert language_of(["C", "../../etc/passwd"]) == "en"
    assert words("is-IS").lang == "is" and words("xx" * 100).lang == "en"


def test_the_log_reads_in_each_language() -> None:
    seated = TableSeated(("p-anna", "p-bo"), 0, (), "p-anna", player_names=("Anna", "Bo"))
    drawn, again = CardDrawn(1, parse_cards("7H")[0], False), TurnTimedOut(1, 5, False)
    read = {}
    for lang in LANGUAGES:
        narrator = Narrator(0, say=words(lang))
        lines = [narrator.sentence(_seen(event, 0)) for event in (seated, drawn, again)]
        read[lang] = lines
        assert "Bo" in lines[1] and "7♥" not in lines[1]  # the other's card stays hidden in every language
    assert read["ru"][1:] == ["Bo берёт карту из колоды", "Bo: время снова вышло (5 ходов подряд)"]
    assert read["en"][2] == "Bo's time ran out again (5 turns in a row)"
    assert len({lines[0] for lines in read.values()}) == len(LANGUAGES)


def _seen(event: event_format.Logged, viewer: int) -> events_pb2.GameEvent:
    message = event_format.envelope("g", 1, "c", event, 0.0)
    sight.redact(message, sight.of_seat(viewer))
    return message
