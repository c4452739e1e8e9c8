"""One game read as the engine folds it, for the operator's tools (`replay`, `verify`)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from rummy_contracts.event_format import check_format
from rummy_contracts.projection import EngineState, GameProjection
from rummy_store import EventLog
from rummy_store.catch_up import CatchUpReader, Step


def game_steps(log: EventLog, game_id: str) -> Iterator[Step[EngineState | None]]:
    """Every record of the game with the engine's state after it. A stray record (a payload that does
    not parse, another event format, a seq out of place) is a skipped step, so it cannot stop a replay
    of the rest. A game whose first record has another event format is another meldstream's game as a
    whole: refused (`OtherEventFormat`), as the engine refuses such a store at start."""
    records = log.read_stream(game_id)
    first = next(records, None)
    if first is None:
        return
    check_format(first)
    yield from CatchUpReader(log, GameProjection()).steps(game_id, itertools.chain([first], records))


def skipped_line(step: Step[EngineState | None]) -> str:
    r = step.record
    return (
        f"seq {r.seq}: SKIPPED the record at partition {r.position.partition} offset {r.position.offset} "
        f"(command {r.command_id[:40]!r}): {step.skipped}"
    )
