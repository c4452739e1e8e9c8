"""The long-lived credentials identity hands out, and how each is kept: only a SHA-256 of its random part.

Every secret names where it is kept, so any instance can send it to the partition that holds it:
`msr_<account>_<session>_<random>` a session's refresh token, `msp_<account>_<token id>_<random>` a
personal API token, `msx_<account>_<random>` a password reset link's token, `mss_<service>_<random>`
a service's credential (kept in identity's configuration, not in the log). 32 random bytes make a
guess hopeless, so a plain hash suffices (a password, which a person chooses, gets argon2id instead).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

REFRESH: Final = "msr"
PERSONAL: Final = "msp"
RESET: Final = "msx"
SERVICE: Final = "mss"
MAX_CHARS: Final = 512


@dataclass(frozen=True, slots=True)
class Secret:
    """A parsed secret: its kind, who holds it (an account id or a service name), the id of the
    session or token it opens (empty for a reset link or a service), and its random part."""

    kind: str
    owner: str
    item: str
    random: str

    def hash(self) -> bytes:
        return digest(self.random)


def digest(random: str) -> bytes:
    return hashlib.sha256(random.encode()).digest()


def matches(random: str, stored: bytes) -> bool:
    return hmac.compare_digest(digest(random), stored)


def new_id() -> str:
    """A session's or a token's id: 8 random bytes in hex, short enough to list."""
    return secrets.token_hex(8)


def random_part() -> str:
    return base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()


def make(kind: str, owner: str, item: str = "") -> tuple[str, Secret]:
    """A new secret of `kind` for `owner` (and `item`): its text, to hand out once, and its parts."""
    parsed = Secret(kind, owner, item, random_part())
    parts = [kind, owner, *([item] if item else []), parsed.random]
    return "_".join(parts), parsed


def service_credentials(names: Iterable[str]) -> dict[str, str]:
    """A new credential for each named service (its secret, to give to that service alone)."""
    return {name: make(SERVICE, name)[0] for name in names}


def hashes(issued: Mapping[str, str]) -> dict[str, bytes]:
    """What identity keeps of service credentials: each one's hash, by service."""
    parsed = {name: parse(text, SERVICE) for name, text in issued.items()}
    return {name: secret.hash() for name, secret in parsed.items() if secret is not None}


def parse(text: str, kind: str) -> Secret | None:
    """The parts of a secret of `kind`, or None when `text` is not one (never says why: a probe learns
    nothing from the refusal)."""
    if len(text) > MAX_CHARS or not text.startswith(kind + "_"):
        return None
    with_item = kind in (REFRESH, PERSONAL)
    fields = text.split("_", 3 if with_item else 2)
    if len(fields) != (4 if with_item else 3) or not all(fields):
        return None
    if with_item:
        return Secret(kind, fields[1], fields[2], fields[3])
    return Secret(kind, fields[1], "", fields[2])
