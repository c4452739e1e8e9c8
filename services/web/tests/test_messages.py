"""The page's words come from the message catalogue: every id the scripts and the markup use is one of
English's (a plural where the script counts), the markup's English is the catalogue's, the language
select offers the catalogue's languages, and the gateway serves each catalogue cached, an unknown
language refused."""

from __future__ import annotations

import asyncio
import json
import re
import urllib.error
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

from meldstream_web.config import WebConfig
from meldstream_web.server import start_gateway
from rummy_contracts import action_labels
from rummy_contracts.catalogue import LANGUAGES, raw
from rummy_infra.local import free_port

STATIC = Path(__file__).resolve().parents[1] / "src" / "meldstream_web" / "static"
ENGLISH = raw("en")
CALL = re.compile(r"\b(t|tn|tnodes)\(\s*(\"[^\"]+\"|`[^`]+`)")


class _Words(HTMLParser):
    """The markup's data-i18n* ids with the English they hold, and the language select's options."""

    def __init__(self) -> None:
        super().__init__()
        self.pending: str | None = None
        self.texts: dict[str, str] = {}
        self.attributes: list[tuple[str, str]] = []
        self.options: list[tuple[str, str]] = []
        self._in_language = False
        self._option: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {name: value or "" for name, value in attrs}
        self.pending = found.get("data-i18n")
        for data, attribute in (("placeholder", "placeholder"), ("label", "aria-label"), ("title", "title")):
            if f"data-i18n-{data}" in found:
                self.attributes.append((found[f"data-i18n-{data}"], found.get(attribute, "")))
        self._in_language = self._in_language or found.get("id") == "language"
        self._option = found.get("value") if tag == "option" and self._in_language else None

    def handle_endtag(self, tag: str) -> None:
        self._in_language = self._in_language and tag != "select"

    def handle_data(self, data: str) -> None:
        if self.pending:
            self.texts[self.pending] = data
            self.pending = None
        if self._option is not None:
            self.options.append((self._option, data))
            self._option = None


def _markup(name: str) -> _Words:
    words = _Words()
    words.feed((STATIC / name).read_text())
    return words


def test_every_id_the_scripts_use_is_in_the_catalogue() -> None:
    used = 0
    for script in sorted(STATIC.glob("*.js")):
        for call, quoted in CALL.findall(script.read_text()):
            key = quoted[1:-1]
            if key.startswith("`") or "${" in key:  # an id made at run time: its prefix must exist
                prefix = key.split("${", 1)[0]
                assert any(k.startswith(prefix) for k in ENGLISH), (script.name, key)
                continue
            assert key in ENGLISH, (script.name, key)
            assert isinstance(ENGLISH[key], dict) == (call == "tn"), (script.name, key)
            used += 1
    assert used > 150


def test_the_markup_s_english_is_the_catalogue_s() -> None:
    for page in ("index.html", "chat-reports.html"):
        words = _markup(page)
        for key, text in words.texts.items():
            assert ENGLISH[key] == text, (page, key)
        for key, text in words.attributes:
            assert ENGLISH[key] == text, (page, key)
    assert len(_markup("index.html").texts) > 60


def test_the_language_select_offers_every_language_in_its_own_name() -> None:
    assert _markup("index.html").options == [(lang, raw(lang)["language.name"]) for lang in LANGUAGES]


def _get(url: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as reply:
            return reply.status, {k.lower(): v for k, v in reply.headers.items()}, reply.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


async def _served() -> list[tuple[int, dict[str, str], bytes]]:
    gateway = await start_gateway(WebConfig(address=f"127.0.0.1:{free_port()}", bot_pace_ms=0))
    try:
        ru = await asyncio.to_thread(_get, gateway.url + "/i18n/ru.json", {})
        again = await asyncio.to_thread(_get, gateway.url + "/i18n/ru.json", {"If-None-Match": ru[1]["etag"]})
        unknown = await asyncio.to_thread(_get, gateway.url + "/i18n/de.json", {})
        outside = await asyncio.to_thread(_get, gateway.url + "/i18n/..%2F..%2Fapp.py.json", {})
        return [ru, again, unknown, outside]
    finally:
        await gateway.stop()


def test_the_gateway_serves_each_catalogue_cached() -> None:
    (status, headers, body), (again, _, empty), (unknown, _, refusal), outside = asyncio.run(_served())
    assert status == 200 and "max-age" in headers["cache-control"]
    assert json.loads(body) == {"lang": "ru", "messages": raw("ru"), "actions": action_labels.table()}
    assert (again, empty) == (304, b"")
    assert unknown == 404 and json.loads(refusal)["code"] == "no_such_language"
    assert outside[0] == 404 and b"import" not in outside[2]
