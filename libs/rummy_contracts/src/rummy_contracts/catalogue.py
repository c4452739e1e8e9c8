"""The words every program shows people, from one message catalogue per language: `messages/<lang>.json`,
read here by the gateway and the terminal and served by the gateway to the page (which reads the same
file), so the page, `meldstream play` and the replay say the same in each language.

A message is a text with `{name}` placeholders, or, when it counts something, its plural forms keyed by
CLDR category (`one`, `few`, `many`, `other`) chosen by the language's CLDR plural rule (Babel's, the CLDR
data the page's `Intl.PluralRules` also follows). A placeholder's value is inserted as it is: the text is
plain, escaped by whoever shows it. docs/contributing/languages.md says how to add a language.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping
from importlib import resources
from typing import Final

from babel import Locale

LANGUAGES: Final = ("en", "hu", "ru", "is")
"""The languages of the catalogue: English, then those of the rules' original texts."""
DEFAULT: Final = "en"
PLACEHOLDER: Final = re.compile(r"\{([a-z_]+)\}")
Message = str | dict[str, str]


def raw(lang: str) -> dict[str, Message]:
    """The catalogue file of `lang` as it is stored (what the gateway serves the page)."""
    text = resources.files(__package__).joinpath("messages", f"{lang}.json").read_text(encoding="utf-8")
    data: dict[str, Message] = json.loads(text)
    return data


def plural_categories(lang: str) -> frozenset[str]:
    """The CLDR plural categories `lang` uses for whole numbers, and `other` (every language's)."""
    return frozenset(Locale.parse(lang).plural_form.tags) | {"other"}


def fill(template: str, params: Mapping[str, object]) -> str:
    """`template` with each `{name}` replaced by `params[name]` (a missing one is a bug: KeyError)."""
    return PLACEHOLDER.sub(lambda match: str(params[match.group(1)]), template)


class Words:
    """The messages of one language; an id it lacks falls back to English (a test keeps none missing)."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self._messages = {**raw(DEFAULT), **raw(lang)} if lang != DEFAULT else raw(DEFAULT)
        self._category = Locale.parse(lang).plural_form

    def __contains__(self, key: str) -> bool:
        return key in self._messages

    def __call__(self, key: str, /, **params: object) -> str:
        return fill(self.template(key), params)

    def template(self, key: str) -> str:
        """The message `key` unfilled (for a caller that escapes it first, as the terminal's markup)."""
        message = self._messages[key]
        if isinstance(message, dict):
            raise TypeError(f"{key} has plural forms: use Words.count")
        return message

    def form(self, key: str, count: int) -> str:
        """The plural form of `key` for `count`, unfilled."""
        forms = self._messages[key]
        if isinstance(forms, str):
            raise TypeError(f"{key} has no plural forms")
        return forms.get(self.category(count)) or forms["other"]

    def category(self, count: int) -> str:
        """The CLDR plural category of `count` in this language (`one`, `few`, `many`, `other`)."""
        category: str = self._category(count)
        return category

    def count(self, key: str, count: int, /, **params: object) -> str:
        """The plural form of `key` for `count` (the `{count}` placeholder), the others from `params`."""
        return fill(self.form(key, count), {**params, "count": count})

    def join(self, items: Iterable[str]) -> str:
        """ "a, b and c" in the language's words."""
        listed = list(items)
        if len(listed) <= 1:
            return "".join(listed)
        return self("list.and", rest=self("list.separator").join(listed[:-1]), last=listed[-1])


def language_of(tags: Iterable[str]) -> str:
    """The first catalogue language among locale tags (`ru_RU.UTF-8`, `hu-HU`, `is`), else English."""
    for tag in tags:
        primary = re.split(r"[_.@-]", tag.strip().lower(), maxsplit=1)[0][:8]
        if primary in LANGUAGES:
            return primary
    return DEFAULT


@functools.cache
def words(lang: str | None = None) -> Words:
    """The catalogue of `lang` (a tag from outside is only looked up, never used as a path)."""
    return Words(language_of([lang or DEFAULT]))


def environment_language(environ: Mapping[str, str]) -> str:
    """The language a terminal asks for: LC_ALL, else LC_MESSAGES, else LANG (POSIX's order), else
    English; `C` and `POSIX` are English."""
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        if value := environ.get(variable, ""):
            return language_of([value])
    return DEFAULT
