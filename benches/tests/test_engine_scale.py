"""bench-scale's own arithmetic and process lookups: the figures of the cost model rest on them."""

from __future__ import annotations

import argparse
import os
import socket

import pytest
from meldstream_benches.engine_scale import _counts, _parts, _stall, cpu_ns_s, listener_pid


def test_a_listening_socket_is_found_as_this_process() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        assert listener_pid(server.getsockname()[1]) == os.getpid()


def test_a_port_nobody_listens_on_has_no_process() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))  # bound, never listening
        assert listener_pid(unused.getsockname()[1]) is None


def test_cpu_to_the_nanosecond_grows_with_work() -> None:
    before = cpu_ns_s(os.getpid())
    sum(i * i for i in range(300_000))
    assert cpu_ns_s(os.getpid()) > before


def test_a_stall_spans_the_change_from_the_last_move_before_it() -> None:
    # moves at 1.0 and 1.5, the change at 2.0, moves again at 5.0 and 5.2, the probes end at 5.3
    assert _stall([1.0, 1.5, 5.0, 5.2], began=2.0, ended=5.3) == pytest.approx(3.5)


def test_a_game_that_never_moved_again_stalls_to_the_end() -> None:
    assert _stall([1.0, 1.5], began=2.0, ended=9.0) == pytest.approx(7.5)


def test_a_game_with_no_move_before_the_change_counts_from_the_change() -> None:
    assert _stall([2.4, 2.5], began=2.0, ended=2.6) == pytest.approx(0.4)


def test_engine_counts_and_parts_are_checked() -> None:
    assert _counts("1,2,4") == [1, 2, 4]
    assert _parts("throughput,rebalance") == ["throughput", "rebalance"]
    with pytest.raises(argparse.ArgumentTypeError):
        _counts("0,2")
    with pytest.raises(argparse.ArgumentTypeError):
        _parts("throughput,everything")
