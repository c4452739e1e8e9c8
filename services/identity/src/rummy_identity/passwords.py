"""Passwords: argon2id (argon2-cffi), never stored or logged in any other form.

The default cost is argon2-cffi's, RFC 9106's second recommendation (64 MiB, 3 passes, 4 lanes:
about 150 ms on a 2-core box); IDENTITY_ARGON2_MEMORY_KIB and IDENTITY_ARGON2_TIME_COST lower it
for tests. A hash made with other parameters still verifies, and is replaced at the next sign-in.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Final

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from rummy_service.errors import InvalidArgument

MIN_CHARS: Final = 10
MAX_CHARS: Final = 256


@dataclass(frozen=True, slots=True)
class Cost:
    memory_kib: int = 65536
    time_cost: int = 3
    parallelism: int = 4


def check(password: str) -> None:
    """INVALID_ARGUMENT `weak_password` / `too_long` for a password the rules refuse."""
    if len(password) > MAX_CHARS:
        raise InvalidArgument("too_long", f"password has {len(password)} characters; at most {MAX_CHARS}")
    if len(password) < MIN_CHARS:
        raise InvalidArgument("weak_password", f"a password has at least {MIN_CHARS} characters")


class Passwords:
    """Hashing and checking off the event loop (each costs tens of milliseconds of CPU by design)."""

    def __init__(self, cost: Cost = Cost()) -> None:
        self._hasher = PasswordHasher(
            time_cost=cost.time_cost, memory_cost=cost.memory_kib, parallelism=cost.parallelism
        )
        self._dummy = self._hasher.hash("a password no account has")

    async def hash(self, password: str) -> str:
        return await asyncio.to_thread(self._hasher.hash, password)

    async def verify(self, stored: str, password: str) -> bool:
        """Whether `password` is the one `stored` hashes; an empty `stored` (no password, or no such
        account) is checked against a dummy hash, so a probe cannot tell the cases apart by time."""
        return await asyncio.to_thread(self._verify, stored or self._dummy, password, bool(stored))

    def _verify(self, stored: str, password: str, real: bool) -> bool:
        try:
            return self._hasher.verify(stored, password) and real
        except (VerificationError, InvalidHashError):
            return False

    def needs_rehash(self, stored: str) -> bool:
        return self._hasher.check_needs_rehash(stored)
