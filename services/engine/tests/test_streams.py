"""The fan-out never waits for a stream: a full queue drops that stream alone, with its reason."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest
from rummy_engine.streams import Fanout, SlowReader, TooManyWatchers, Update, Watchers
from rummy_service.rate_limits import RETRY_TRAILER


def _update(seq: int) -> Update:
    return Update(seq, "view", None, False, cast(Any, None))  # the fan-out never looks at the state


def test_a_full_queue_drops_its_stream_alone() -> None:
    async def scenario() -> None:
        fanout = Fanout()
        slow, fast = fanout.open(2, watcher=True), fanout.open(2, watcher=False)
        for seq in (1, 2, 3):
            fanout.publish(_update(seq))
            assert (await fast.next()) == _update(seq)
        assert len(fanout) == 1 and fanout.watchers == 0
        with pytest.raises(SlowReader) as refused:
            await slow.next()
        assert refused.value.code == "slow_reader"

    asyncio.run(scenario())


def test_a_stream_ends_after_what_it_holds_even_with_a_full_queue() -> None:
    async def scenario() -> None:
        fanout = Fanout()
        stream = fanout.open(2, watcher=False)
        fanout.publish(_update(1))
        fanout.publish(_update(2))
        fanout.end()  # the game left this engine
        assert [await stream.next(), await stream.next(), await stream.next()] == [
            _update(1),
            _update(2),
            None,
        ]

    asyncio.run(scenario())


@pytest.mark.parametrize(("of_game", "open_", "where"), [(2, 0, "this game"), (0, 3, "this engine")])
def test_spectators_past_a_limit_are_told_when_to_retry(of_game: int, open_: int, where: str) -> None:
    watchers = Watchers(per_game=2, per_engine=3)
    watchers.open = open_
    with pytest.raises(TooManyWatchers) as refused:
        watchers.check(of_game)
    assert refused.value.code == "too_many_watchers" and where in refused.value.message
    assert int(dict(refused.value.trailers)[RETRY_TRAILER]) > 0
    watchers.open = 2
    watchers.check(1)  # under both limits


def test_streams_opened_at_one_seq_share_its_opening_view() -> None:
    """A crowd of spectators arriving together costs one render of the opening view (its cache)."""
    fanout = Fanout()
    state, moved = cast(Any, object()), cast(Any, object())
    first = fanout.opening(7, state)
    assert fanout.opening(7, state) is first
    assert first == Update(7, "view", None, False, state)
    after_a_move = fanout.opening(8, moved)
    assert after_a_move is not first and after_a_move.seq == 8 and after_a_move.state is moved
    assert fanout.opening(8, state) is not after_a_move  # another state at the same seq: not shared
