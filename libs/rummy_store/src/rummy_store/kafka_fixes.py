"""A fix to kafka-python 3.0.12's network selector, applied when the store is imported.

Before every I/O wait, `NetworkSelector.register_event` asks the stdlib selector for the socket's key
with `get_key`, which raises `KeyError(f"{sock!r} is not registered")` for a socket not yet waited on,
the usual case: formatting that `repr` costs two system calls (getsockname, getpeername) and a string.
Profiled in the engine, it was 9-15 % of its producers' network threads' CPU (issue 24). The fixed
methods look the key up in the selector's own table, with no exception, and otherwise do what the
originals do. Applied only to the version they were written against; another version keeps its own.
"""

from __future__ import annotations

import selectors
from typing import Any, Final

import kafka
from kafka.net import selector as _selector

PATCHED_VERSION: Final = "3.0.12"


def _key(selector: Any, fileobj: Any) -> Any:
    """The selector's key for `fileobj`, or None (no exception, so no repr of the socket)."""
    return selector._fd_to_key.get(selector._fileobj_lookup(fileobj))


def _register_event(self: Any, fileobj: Any, event: int, task: Any) -> None:
    if not isinstance(task, _selector.Task):
        task = _selector.Task(task)
    sel = self._selector
    key = _key(sel, fileobj)
    if key is None:
        sel.register(fileobj, event, (task, None) if event == selectors.EVENT_READ else (None, task))
        return
    reader, writer = key.data
    if event == selectors.EVENT_READ and reader:
        raise RuntimeError(f"EVENT_READ already registered for fileobj {fileobj} by {reader} (new: {task})")
    if event == selectors.EVENT_WRITE and writer:
        raise RuntimeError(f"EVENT_WRITE already registered for fileobj {fileobj} by {writer} (new: {task})")
    data = (task, writer) if event == selectors.EVENT_READ else (reader, task)
    sel.modify(fileobj, key.events | event, data)


def _unregister_event(self: Any, fileobj: Any, event: int) -> None:
    sel = self._selector
    try:
        key = _key(sel, fileobj)
    except ValueError:  # closed (fileno -1): nothing registered any more, as the original allows
        return
    if key is None:
        return
    reader, writer = key.data
    events = key.events & ~event
    if not events:
        sel.unregister(fileobj)
    else:
        sel.modify(fileobj, events, (None, writer) if event == selectors.EVENT_READ else (reader, None))


def apply() -> bool:
    """Install the fix (once); False when kafka-python is another version than it was written for."""
    if kafka.__version__ != PATCHED_VERSION or not hasattr(_selector, "NetworkSelector"):
        return False
    cls: Any = _selector.NetworkSelector
    if getattr(cls, "_meldstream_fixed", False):
        return True
    cls.register_event = _register_event
    cls.unregister_event = _unregister_event
    cls._meldstream_fixed = True
    return True


apply()
