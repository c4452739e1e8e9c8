"""Chat's settings (WEB_CHAT_*): where its lines are kept, how long a line may be, how often an
account may post, and the words operators mask."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from limits import RateLimitItem, parse_many
from rummy_service.config import ConfigError, env_int, env_str, store_location
from rummy_store.locations import StoreLocation

DEFAULT_DIR: Final = ".local/web"
DEFAULT_RATE: Final = "5/10seconds;30/minute"
MAX_WORDS: Final = 1000
MAX_WORD: Final = 64


@dataclass(frozen=True, slots=True)
class ChatSettings:
    """`store`: the platform's store, whose topic `rummy.chat.lines.v1` holds every line (on Kafka,
    every replica reads it; embedded, one gateway's directory). `blocked`: lowercase words masked."""

    store: StoreLocation = field(default_factory=lambda: StoreLocation(directory=DEFAULT_DIR))
    max_chars: int = 300
    rate: str = DEFAULT_RATE
    blocked: tuple[str, ...] = ()

    @property
    def rate_items(self) -> tuple[RateLimitItem, ...]:
        return tuple(parse_many(self.rate))


def load_chat(env: Mapping[str, str] | None = None) -> ChatSettings:
    """MELDSTREAM_STORE (or KAFKA_BOOTSTRAP with REDIS_URL, or WEB_DATA_DIR), WEB_CHAT_MAX_CHARS,
    WEB_CHAT_RATE and WEB_CHAT_BLOCKED_WORDS."""
    store = store_location("WEB_DATA_DIR", DEFAULT_DIR, env, redis_required=False)
    if store.kafka and not store.redis:
        raise ConfigError("chat on Kafka keeps each account's mutes in Redis: add ?redis=URL to the store")
    max_chars = env_int("WEB_CHAT_MAX_CHARS", 300, env)
    if not 1 <= max_chars <= 2000:
        raise ConfigError(f"WEB_CHAT_MAX_CHARS={max_chars} is not from 1 to 2000")
    rate = env_str("WEB_CHAT_RATE", DEFAULT_RATE, env).strip()
    try:
        parse_many(rate)
    except ValueError:
        raise ConfigError(f"WEB_CHAT_RATE={rate[:80]!r} is not a limit like {DEFAULT_RATE}") from None
    return ChatSettings(store, max_chars, rate, blocked_words(env_str("WEB_CHAT_BLOCKED_WORDS", "", env)))


def blocked_words(raw: str) -> tuple[str, ...]:
    """Comma-separated words (or phrases) to mask, compared without case."""
    words = tuple(dict.fromkeys(w.strip().lower() for w in raw.split(",") if w.strip()))
    if len(words) > MAX_WORDS or any(len(w) > MAX_WORD for w in words):
        raise ConfigError(f"WEB_CHAT_BLOCKED_WORDS: at most {MAX_WORDS} words of {MAX_WORD} characters")
    return words


def masked(text: str, words: tuple[str, ...]) -> str:
    """`text` with each blocked word (a whole word, any case) replaced by asterisks."""
    if not words:
        return text
    pattern = r"\b(?:" + "|".join(map(re.escape, words)) + r")\b"
    return re.sub(pattern, lambda m: "*" * len(m.group(0)), text, flags=re.IGNORECASE)
