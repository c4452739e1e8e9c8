"""`Memo`: the one bounded cache the rules package uses for values it derives again and again.

The package is observably pure (same inputs, same outputs), yet it keeps memos of derived values
(melds of a hand shape, commands, the options of a table meld) because a decision asks the same
questions many times. Every memo follows the same two rules:

* Bounded: past `limit` entries it starts afresh (`put`), so a long-running service holds at most
  `limit` entries per memo; forgetting costs recomputation, never a different answer.
* Thread-safe by construction: an entry is an immutable value derived from its key alone (an entry
  keyed by an object's id also holds that object, and a hit checks it is the same one), so threads
  racing on a miss compute equal values and either may win.
"""

from __future__ import annotations

from typing import Final, TypeVar

K = TypeVar("K")
V = TypeVar("V")

LIMIT: Final = 100_000  # entries per memo unless a memo says otherwise


class Memo(dict[K, V]):
    """A dict read with `get` as usual (C speed on the hot path) and written with `put`."""

    __slots__ = ("limit",)

    def __init__(self, limit: int = LIMIT) -> None:
        super().__init__()
        self.limit = limit

    def put(self, key: K, value: V) -> V:
        """Store and return `value`, first forgetting every entry if the memo is full."""
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value
