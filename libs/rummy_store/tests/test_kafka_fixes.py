"""The kafka-python selector fix (`rummy_store.kafka_fixes`): the same registrations, no repr of sockets."""

from __future__ import annotations

import selectors
import socket
from typing import Any

import kafka
import pytest
from kafka.net.selector import NetworkSelector
from rummy_store import kafka_fixes


class _Counted(socket.socket):
    reprs = 0

    def __repr__(self) -> str:
        type(self).reprs += 1
        return "<socket>"


def test_applied_to_the_pinned_version() -> None:
    assert kafka_fixes.apply() is (kafka.__version__ == kafka_fixes.PATCHED_VERSION)


@pytest.mark.skipif(kafka.__version__ != kafka_fixes.PATCHED_VERSION, reason="fix not applied")
def test_register_and_unregister_as_the_original_without_repr() -> None:
    net: Any = NetworkSelector()
    left, right = socket.socketpair()
    sock = _Counted(fileno=left.detach())
    try:
        net.register_event(sock, selectors.EVENT_READ, lambda: None)
        net.register_event(sock, selectors.EVENT_WRITE, lambda: None)
        key = net._selector.get_key(sock)
        assert key.events == selectors.EVENT_READ | selectors.EVENT_WRITE
        net.unregister_event(sock, selectors.EVENT_READ)
        assert net._selector.get_key(sock).events == selectors.EVENT_WRITE
        assert net._selector.get_key(sock).data[0] is None
        net.unregister_event(sock, selectors.EVENT_WRITE)
        assert sock.fileno() not in net._selector._fd_to_key
        net.unregister_event(sock, selectors.EVENT_WRITE)  # not registered: nothing to do
        assert _Counted.reprs == 0
        net.register_event(sock, selectors.EVENT_READ, lambda: None)
        with pytest.raises(RuntimeError):  # a second reader, as the original refuses it
            net.register_event(sock, selectors.EVENT_READ, lambda: None)
    finally:
        sock.close()
        right.close()
        net.close()
