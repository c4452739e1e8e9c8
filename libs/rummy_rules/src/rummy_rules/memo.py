"""`remember`: the one way the rules package fills its memos of values it derives again and again.

The package is observably pure (same inputs, same outputs), yet it keeps memos of derived values
(melds of a hand shape, commands, the options of a table meld) because a decision asks the same
questions many times. Every memo follows the same two rules:

* Bounded: past `limit` entries it starts afresh (`remember`), so a long-running service holds at most
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


def remember(memo: dict[K, V], key: K, value: V, limit: int = LIMIT) -> V:
    """Store and return `value`, first forgetting every entry if `memo` holds `limit` of them.

    Memos stay plain dicts, read with `get`: a dict subclass would cost every lookup on the hot
    paths a slower attribute lookup.
    """
    if len(memo) >= limit:
        memo.clear()
    memo[key] = value
    return value
