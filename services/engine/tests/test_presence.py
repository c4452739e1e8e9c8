"""Disconnect protection and time banks (presence.py, meldstream M3), over gRPC, on the embedded store
and on real Kafka + Redis: a seat whose last stream closes keeps its place for a grace, comes back
within it, or has its bank, its automatic turns and then a forfeit logged; all of it from the log."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import pytest
from rummy.game.v1 import game_service_pb2 as gs
from rummy_client import GameClient, RpcFailure
from rummy_contracts import event_format
from rummy_contracts.projection import GameProjection
from rummy_engine.config import EngineConfig
from rummy_engine.engine import RunningEngine
from rummy_rules.game import replay

from .conftest import People
from .test_service import NO_TIMER, refused, started

CONNECTED, GONE, FORFEITED = (
    gs.SEAT_PRESENCE_CONNECTED,
    gs.SEAT_PRESENCE_DISCONNECTED,
    gs.SEAT_PRESENCE_FORFEITED,
)


async def _follow(client: GameClient, game_id: str, seat: int | None) -> asyncio.Task[None]:
    """The seat's stream (None: a spectator's), open once its first update came (`_close` closes it)."""
    first = asyncio.Event()

    async def read() -> None:
        async for _ in client.updates(game_id, seat):
            first.set()

    task = asyncio.get_running_loop().create_task(read())
    await asyncio.wait_for(first.wait(), 10)
    return task


async def _close(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def _until(
    look: Callable[[], Awaitable[gs.PlayerView]], ok: Callable[[gs.PlayerView], bool]
) -> gs.PlayerView:
    deadline = time.monotonic() + 20
    while True:
        view = await look()
        if ok(view) or time.monotonic() > deadline:
            return view
        await asyncio.sleep(0.05)


async def _kinds(client: GameClient, game_id: str) -> list[tuple[str, Any]]:
    history = await client.history(game_id)
    out: list[tuple[str, Any]] = []
    for entry in history.entries:
        kind = entry.event.WhichOneof("event") or ""
        out.append((kind, getattr(entry.event, kind)))
    return out


def _run(stores: dict[str, Any], scenario: Callable[[RunningEngine], Awaitable[None]], **config: Any) -> None:
    async def main() -> None:
        engine = await started(EngineConfig(address="127.0.0.1:0", **stores, **config))
        try:
            await scenario(engine)
        finally:
            await engine.stop()

    asyncio.run(main())


def test_a_seat_back_within_the_grace_plays_on(stores: dict[str, Any], people: People) -> None:
    """The last stream of a seat closing logs SeatDisconnected with the grace's end; a stream opened
    again logs SeatReconnected; a seat that only calls (never streams) is never marked; the seat's
    turn waits for its grace rather than timing out."""

    async def scenario(engine: RunningEngine) -> None:
        ann, bob, _ = people.clients(engine.address)
        ops = people.client(engine.address, people.ops)
        created = await ops.create_game("kalooki", people.ids[:2], "drop", turn_timeout_ms=NO_TIMER)
        mover = created.view.turn
        players = [ann, bob]
        client = players[mover]
        stream = await _follow(client, "drop", mover)
        opened = await client.view("drop", mover)
        assert [s.presence for s in opened.seats] == [CONNECTED, CONNECTED]
        began = time.time()
        await _close(stream)
        gone = await _until(lambda: client.view("drop", mover), lambda v: v.seats[mover].presence == GONE)
        seat = gone.seats[mover]
        assert seat.presence == GONE and seat.turns_before_forfeit == 2
        ends = seat.grace_ends_at.ToMilliseconds() / 1000
        assert began + 2.5 < ends < time.time() + 3.5
        # Its turn is timed by the grace now, not by the table's (long) limit.
        assert abs(gone.turn_deadline.ToMilliseconds() / 1000 - ends) < 0.01
        back = await _follow(client, "drop", mover)
        here = await client.view("drop", mover)
        assert here.seats[mover].presence == CONNECTED and not here.seats[mover].HasField("grace_ends_at")
        await client.submit("drop", mover, gs.Action(draw_from_stock=gs.DrawFromStock()))
        kinds = [k for k, _ in await _kinds(ops, "drop")]
        assert kinds[2:5] == ["seat_disconnected", "seat_reconnected", "card_drawn"]
        assert next(e for k, e in await _kinds(ops, "drop") if k == "seat_disconnected").seat == mover
        # The other seat never streamed: never marked, whatever its calls.
        assert here.seats[1 - mover].presence == CONNECTED
        await _close(back)
        for c in (ann, bob, ops):
            await c.close()

    _run(stores, scenario, disconnect_grace_ms=3_000, forfeit_after_turns=2)


def test_a_seat_that_stays_away_runs_its_bank_then_auto_turns_then_forfeits(
    stores: dict[str, Any], people: People
) -> None:
    """Grace, then the time bank (TimeBankUsed), then the engine's turns for it, then SeatForfeited;
    the other two play on without it; what it asks afterwards is refused and changes nothing; the
    log replays to the state the engine served, in the rules alone and in the engine's fold."""

    async def scenario(engine: RunningEngine) -> None:
        ann, bob, cyd = people.clients(engine.address)
        ops = people.client(engine.address, people.ops)
        await ops.create_game("rummy40", people.ids, "gone", turn_timeout_ms=150, time_bank_ms=200)
        stream = await _follow(ann, "gone", 0)
        await _close(stream)
        forfeited = await _until(lambda: ann.view("gone", 0), lambda v: v.seats[0].presence == FORFEITED)
        assert forfeited.seats[0].presence == FORFEITED and not forfeited.active[0]
        assert forfeited.phase != gs.PHASE_GAME_OVER  # two seats are left: they play on
        assert forfeited.seats[0].bank_left_ms == 0 and forfeited.seats[1].presence == CONNECTED
        events = await _kinds(ops, "gone")
        ann_steps = [
            (k, e)
            for k, e in events
            if k in {"seat_disconnected", "time_bank_used", "turn_timed_out", "seat_forfeited"}
            and e.seat == 0
        ]
        steps = [k for k, _ in ann_steps]
        assert steps[:2] == ["seat_disconnected", "time_bank_used"]
        assert ann_steps[1][1].used_ms == 200  # the whole bank, spent on its first turn after the grace
        assert steps[2:] == ["turn_timed_out", "turn_timed_out", "seat_forfeited"]
        disconnected = ann_steps[0][1]
        assert (disconnected.grace_ms, disconnected.forfeit_after_turns) == (300, 1)
        at_forfeit = next(i for i, (k, _) in enumerate(events) if k == "seat_forfeited")
        assert events[at_forfeit - 1][0] == "turn_timed_out"  # its timeout is what forfeits it
        # A forfeited seat's requests are refused; its stream marks nothing; the others play on, and
        # nothing of seat 0 is logged after its forfeit.
        await ann.close()
        ann = people.client(engine.address, people.players[0])
        denied = await refused(ann.submit("gone", 0, gs.Action(draw_from_stock=gs.DrawFromStock())))
        assert denied.status is grpc.StatusCode.FAILED_PRECONDITION
        assert denied.code in {"not_your_turn", "game_over", "no_deal"}
        stream = await _follow(ann, "gone", 0)
        await _close(stream)
        await _until(lambda: bob.view("gone", 1), lambda v: v.seq > forfeited.seq + 6)
        after = await _kinds(ops, "gone")
        assert len(after) > at_forfeit + 6
        assert all(getattr(e, "seat", 1) != 0 for _, e in after[at_forfeit + 1 :])
        # The log replays to the state the engine served at its last seq: in the rules alone, and in
        # the engine's own fold (presence and bank included).
        records = await asyncio.to_thread(lambda: list(engine.stores.log.read_stream("gone")))
        logged = [event_format.event_from_pb(event_format.message_of(record)) for record in records]
        game = replay(event_format.rules_events(logged))
        served = (await ops.state_at("gone", records[-1].seq)).view
        assert list(game.totals) == list(served.totals) and list(game.active) == list(served.active)
        assert game.forfeited == (0,) and served.seats[0].presence == FORFEITED
        projection = GameProjection()
        folded = None
        for record, event in zip(records, logged, strict=True):
            folded = projection.fold(folded, record.command_id, record.seq, event)
        assert folded is not None and folded.game == game
        assert folded.bank_used[0] == 200 and folded.auto_turns[0] == 2  # the forfeiting timeout too
        for c in (ann, bob, cyd, ops):
            await c.close()

    _run(stores, scenario, disconnect_grace_ms=300, forfeit_after_turns=1, away_grace_ms=50)


def test_a_forfeit_leaving_one_seat_ends_the_game_and_a_restart_reads_presence_from_the_log(
    stores: dict[str, Any], people: People
) -> None:
    """Two seats: the one that stays away forfeits and the other wins. A disconnected seat's grace is
    in the log, so an engine started again keeps counting it down from there."""

    async def main() -> None:
        config = EngineConfig(
            address="127.0.0.1:0",
            **stores,
            disconnect_grace_ms=1_500,
            forfeit_after_turns=0,
            away_grace_ms=50,
        )
        engine = await started(config)
        ann, bob, _ = people.clients(engine.address)
        ops = people.client(engine.address, people.ops)
        await ops.create_game("kalooki", people.ids[:2], "duel", turn_timeout_ms=NO_TIMER, time_bank_ms=0)
        stream = await _follow(bob, "duel", 1)
        await _close(stream)
        gone = await _until(lambda: ann.view("duel", 0), lambda v: v.seats[1].presence == GONE)
        ends = gone.seats[1].grace_ends_at.ToMilliseconds()
        for c in (ann, bob, ops):
            await c.close()
        await engine.stop()

        engine = await started(config)
        ann = people.client(engine.address, people.players[0])
        try:
            again = await ann.view("duel", 0)
            assert again.seats[1].presence == GONE and again.seats[1].grace_ends_at.ToMilliseconds() == ends
            if again.turn == 0:  # ann plays her turn so that bob's comes
                for action in (await ann.legal_actions("duel", 0)).actions[:1]:
                    await ann.submit("duel", 0, action)
                view = await ann.view("duel", 0)
                discard = next(
                    a for a in (await ann.legal_actions("duel", 0)).actions if a.HasField("discard")
                )
                await ann.submit("duel", 0, discard)
                assert view.seq > again.seq
            over = await _until(lambda: ann.view("duel", 0), lambda v: v.phase == gs.PHASE_GAME_OVER)
            assert over.phase == gs.PHASE_GAME_OVER and list(over.winners) == [0]
            assert time.time() * 1000 >= ends  # not before the logged grace ended
            kinds = [k for k, _ in await _kinds(ann, "duel")]
            assert kinds[-3:] == ["turn_timed_out", "seat_forfeited", "game_ended"]
        finally:
            await ann.close()
            await engine.stop()

    asyncio.run(main())


def test_a_time_bank_spent_on_a_move_is_logged_with_it(stores: dict[str, Any], people: People) -> None:
    """Past its limit a turn goes on on the bank; the move then made carries TimeBankUsed first, and the
    bank left is in every view. A bank over an hour is refused and creates nothing."""

    async def scenario(engine: RunningEngine) -> None:
        ann, bob, _ = people.clients(engine.address)
        ops = people.client(engine.address, people.ops)
        too_long = await refused(ops.create_game("kalooki", people.ids[:2], "huge", time_bank_ms=3_600_001))
        assert too_long.status is grpc.StatusCode.INVALID_ARGUMENT and too_long.code == "bad_time_bank"
        assert engine.stores.log.last_seq("huge") == 0
        created = await ops.create_game(
            "kalooki", people.ids[:2], "bank", turn_timeout_ms=200, time_bank_ms=5_000
        )
        assert [s.bank_left_ms for s in created.view.seats] == [5_000, 5_000]
        mover = created.view.turn
        client = [ann, bob][mover]
        await asyncio.sleep(0.6)  # 200 ms of the limit, then about 400 of the bank
        await client.submit("bank", mover, gs.Action(draw_from_stock=gs.DrawFromStock()))
        events = await _kinds(ops, "bank")
        kinds = [k for k, _ in events]
        assert kinds[2:4] == ["time_bank_used", "card_drawn"]
        used = events[2][1].used_ms
        assert events[2][1].seat == mover and 300 <= used <= 1_500
        view = await client.view("bank", mover)
        assert view.seats[mover].bank_left_ms == 5_000 - used
        assert view.seats[1 - mover].bank_left_ms == 5_000
        for c in (ann, bob, ops):
            await c.close()

    _run(stores, scenario, disconnect_grace_ms=30_000)


def test_a_restart_resumes_a_bank_run_where_the_log_says_it_stands(
    stores: dict[str, Any], people: People
) -> None:
    """A seat on its bank when its engine stops is still on it when the next engine loads the game: its
    clock started at the game's latest logged event, so the bank ends the limit plus the bank after
    that event, and the move then made logs the bank spent since the limit ran out, before the stop
    and after it; not a fresh turn and a whole bank again."""

    async def main() -> None:
        config = EngineConfig(address="127.0.0.1:0", **stores, disconnect_grace_ms=30_000)
        engine = await started(config)
        ops = people.client(engine.address, people.ops)
        created = await ops.create_game(
            "kalooki", people.ids[:2], "resume", turn_timeout_ms=200, time_bank_ms=30_000
        )
        mover = created.view.turn
        history = await ops.history("resume")
        logged = history.entries[-1].event.occurred_at.ToNanoseconds() / 1e9
        await asyncio.sleep(1.0)  # the limit, then about 800 ms of the bank
        await ops.close()
        await engine.stop()

        engine = await started(config)
        client = people.client(engine.address, people.players[mover])
        ops = people.client(engine.address, people.ops)
        try:
            bank_ends = logged + 0.2 + 30.0  # long enough for an engine on Kafka to start
            # On Kafka the claim loads the game in the background: its clock is read a moment later.
            view = await _until(
                lambda: client.view("resume", mover),
                lambda v: abs(v.turn_deadline.ToNanoseconds() / 1e9 - bank_ends) < 0.3,
            )
            assert abs(view.turn_deadline.ToNanoseconds() / 1e9 - bank_ends) < 0.3
            assert view.seats[mover].bank_left_ms == 30_000  # nothing logged as spent yet
            await client.submit("resume", mover, gs.Action(draw_from_stock=gs.DrawFromStock()))
            since_limit_ms = (time.time() - logged - 0.2) * 1000
            events = await _kinds(ops, "resume")
            spent = next(e for k, e in events if k == "time_bank_used")
            assert spent.seat == mover
            assert since_limit_ms - 500 <= spent.used_ms <= since_limit_ms + 50
            assert spent.used_ms >= 800
        finally:
            await client.close()
            await ops.close()
            await engine.stop()

    asyncio.run(main())


@pytest.mark.parametrize("seat", [None, 1])
def test_streams_refused_mark_nothing(stores: dict[str, Any], people: People, seat: int | None) -> None:
    """Another player's seat or a spectator's stream is no presence of anyone's: nothing is logged."""

    async def scenario(engine: RunningEngine) -> None:
        ann = people.client(engine.address, people.players[0])
        ops = people.client(engine.address, people.ops)
        await ops.create_game("kalooki", people.ids[:2], "watch", turn_timeout_ms=NO_TIMER)
        if seat is None:
            task = await _follow(ann, "watch", None)
            await _close(task)
        else:
            with pytest.raises(RpcFailure) as denied:
                async for _ in ann.updates("watch", seat):
                    pass
            assert denied.value.status is grpc.StatusCode.PERMISSION_DENIED
        await asyncio.sleep(0.3)
        assert engine.stores.log.last_seq("watch") == 2
        for c in (ann, ops):
            await c.close()

    _run(stores, scenario, disconnect_grace_ms=30_000)
