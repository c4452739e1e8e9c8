"""Group commit across units: batches share IN_FLIGHT slots, so under load each write carries more
appends; a batch slower than SLOT_HOLD_S gives its slot up, so one stuck unit never holds the others."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rummy_engine.commits import SLOT_HOLD_S, GroupCommitter
from rummy_store import AppendResult, StoreError
from rummy_store.embedded_log import EmbeddedEventLog
from rummy_store.records import Append, NewEvent


class GatedLog(EmbeddedEventLog):
    """The embedded log, whose writes of `gated` games wait until the test opens the gate."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, partitions=4)
        self.gate = threading.Event()
        self.gated: set[str] = set()
        self.written: list[list[str]] = []

    def append_batch(self, batch: Sequence[Append]) -> list[AppendResult | StoreError | ValueError]:
        self.written.append([a.game_id for a in batch])
        if self.gated & {a.game_id for a in batch}:
            self.gate.wait(10)
        return super().append_batch(batch)


def _games(log: EmbeddedEventLog) -> dict[int, list[str]]:
    """Three game ids in each of the log's partitions (its commit units), by partition."""
    by_unit: dict[int, list[str]] = {}
    n = 0
    while len(by_unit) < log.partitions or min(len(g) for g in by_unit.values()) < 3:
        by_unit.setdefault(log.commit_unit(f"g{n}"), []).append(f"g{n}")
        n += 1
    return {unit: games[:3] for unit, games in by_unit.items()}


def _append(game_id: str) -> Append:
    return Append(game_id, f"{game_id}/create", 0, [NewEvent("GameCreated", b"{}")])


def test_appends_waiting_for_a_slot_go_in_one_batch(tmp_path: Path) -> None:
    asyncio.run(_waiting(tmp_path))


def test_a_slow_batch_gives_its_slot_up(tmp_path: Path) -> None:
    asyncio.run(_slow(tmp_path))


async def _waiting(tmp_path: Path) -> None:
    log = GatedLog(tmp_path / "events.sqlite")
    units = list(_games(log).values())
    first, others = units[0][0], units[1]
    log.gated = {first}
    with ThreadPoolExecutor(8) as pool:
        commits = GroupCommitter(log, pool, in_flight=1)
        writing = asyncio.create_task(commits.append(_append(first)))
        while not log.written:
            await asyncio.sleep(0.001)
        waiting = [asyncio.create_task(commits.append(_append(g))) for g in others]
        await asyncio.sleep(SLOT_HOLD_S / 4)
        assert log.written == [[first]]  # the one slot is held: the other unit's appends wait
        log.gate.set()
        results = await asyncio.gather(writing, *waiting)
    assert [r.last_seq for r in results] == [1] * 4
    assert log.written == [[first], others]  # one batch for the three that waited, not three


async def _slow(tmp_path: Path) -> None:
    log = GatedLog(tmp_path / "events.sqlite")
    units = list(_games(log).values())
    stuck, other = units[0][0], units[1][0]
    log.gated = {stuck}
    with ThreadPoolExecutor(8) as pool:
        commits = GroupCommitter(log, pool, in_flight=1)
        held = asyncio.create_task(commits.append(_append(stuck)))
        while not log.written:
            await asyncio.sleep(0.001)
        result = await asyncio.wait_for(commits.append(_append(other)), SLOT_HOLD_S * 20)
        assert result.last_seq == 1 and not held.done()  # written past the stuck batch
        log.gate.set()
        assert (await held).last_seq == 1
