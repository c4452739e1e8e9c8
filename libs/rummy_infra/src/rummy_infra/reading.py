"""Reading a Kafka topic in a test just after a write: a commit is answered before its marker makes the
records visible to a read_committed reader, so a read the instant after may miss the last transaction."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def read_until(read: Callable[[], T], shown: Callable[[T], bool], timeout_s: float) -> T:
    """`read()` again until `shown` holds of what it read or `timeout_s` passed; the last read."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = read()
        if shown(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.1)
