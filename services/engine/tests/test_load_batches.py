"""Loads asked for while a read is under way go together in the next read; a failed read fails its own."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import pytest
from rummy_engine.load_batches import BATCHES_AT_ONCE, LoadBatcher


class Reads:
    """A `load_many` that records each read and waits for the test to let it finish."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.release = asyncio.Event()
        self.failing: set[str] = set()

    def load_many(self, games: Sequence[str]) -> dict[str, str]:
        if self.failing & set(games):
            raise RuntimeError("broker away")
        return {game: f"state of {game}" for game in games}

    async def run(self, fn: Callable[[Sequence[str]], dict[str, str]], games: list[str]) -> dict[str, str]:
        self.batches.append(games)
        await self.release.wait()
        return fn(games)


def test_loads_waiting_behind_reads_go_together_in_the_next() -> None:
    asyncio.run(_together())


def test_a_failed_read_fails_its_loads_only() -> None:
    asyncio.run(_failing())


def test_a_client_s_load_goes_before_background_loads() -> None:
    asyncio.run(_priority())


async def _settle() -> None:
    for _ in range(5):  # the loads' tasks, then the readers they start
        await asyncio.sleep(0)


async def _together() -> None:
    reads = Reads()
    batcher = LoadBatcher(reads.load_many, reads.run)
    first = []
    for n in range(BATCHES_AT_ONCE):  # each load starts a read of its own while readers are free
        first.append(asyncio.create_task(batcher.load(f"g{n}")))
        await _settle()
    assert reads.batches == [[f"g{n}"] for n in range(BATCHES_AT_ONCE)]
    later = [asyncio.create_task(batcher.load(game)) for game in ("x", "y", "x")]
    await _settle()
    assert len(reads.batches) == BATCHES_AT_ONCE  # every reader busy: the later loads wait together
    reads.release.set()
    games = [f"g{n}" for n in range(BATCHES_AT_ONCE)] + ["x", "y", "x"]
    assert await asyncio.gather(*first, *later) == [f"state of {g}" for g in games]
    assert reads.batches[BATCHES_AT_ONCE:] == [["x", "y"]]


async def _priority() -> None:
    reads = Reads()
    batcher = LoadBatcher(reads.load_many, reads.run)
    busy = []
    for n in range(BATCHES_AT_ONCE):  # every reader busy, one game each
        busy.append(asyncio.create_task(batcher.load(f"busy{n}")))
        await _settle()
    resumed = [asyncio.create_task(batcher.load(f"r{n}", background=True)) for n in range(12)]
    asked = [asyncio.create_task(batcher.load(game)) for game in ("c1", "r11")]  # r11: hurried
    await _settle()
    reads.release.set()
    await asyncio.gather(*busy, *resumed, *asked)
    later = reads.batches[BATCHES_AT_ONCE:]
    assert later[0] == ["c1", "r11"]
    assert [len(batch) for batch in later[1:]] == [8, 3]  # the rest a few at a time
    assert sorted(g for batch in later[1:] for g in batch) == sorted(f"r{n}" for n in range(11))


async def _failing() -> None:
    reads = Reads()
    reads.failing = {"bad"}
    batcher = LoadBatcher(reads.load_many, reads.run)
    reads.release.set()
    with pytest.raises(RuntimeError, match="broker away"):
        await batcher.load("bad")
    assert await batcher.load("good") == "state of good"
