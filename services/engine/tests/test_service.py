"""The engine over gRPC on the embedded store, in process: errors, idempotency, access, streams, timers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from rummy.game.v1 import events_pb2
from rummy.game.v1 import game_service_pb2 as gs
from rummy_client import GameClient, RpcFailure
from rummy_client.bots import BotPlayer
from rummy_contracts import wire
from rummy_contracts.projection import engine_commands
from rummy_contracts.sentences import Narrator, card_words
from rummy_engine.audit import action_leaks, leaks, states_by_seq
from rummy_engine.config import EngineConfig
from rummy_engine.engine import RunningEngine, start_engine
from rummy_engine.seeds import game_seed
from rummy_rules.cards import seed_commitment
from rummy_rules.variants import PLAYABLE_VARIANTS
from rummy_store.embedded_log import EmbeddedEventLog

from .conftest import People

NO_TIMER = 600_000


def run(
    tmp_path: Path, people: People, scenario: Callable[[RunningEngine], Awaitable[None]], **config: Any
) -> None:
    run_on({"data_dir": str(tmp_path), "identity": people.identity.address}, scenario, **config)


def run_on(
    stores: dict[str, Any], scenario: Callable[[RunningEngine], Awaitable[None]], **config: Any
) -> None:
    """`scenario` against an engine on `stores` (the `stores` fixture), once it owns its partitions."""

    async def main() -> None:
        engine = await started(EngineConfig(address="127.0.0.1:0", **stores, **config))
        try:
            await scenario(engine)
        finally:
            await engine.stop()

    asyncio.run(main())


async def started(config: EngineConfig) -> RunningEngine:
    """A started engine that owns its partitions (on Kafka the group assigns them first)."""
    engine = await start_engine(config)
    if engine.ownership is not None:
        assert await asyncio.to_thread(engine.ownership.settled.wait, 60)
    return engine


async def refused(call: Awaitable[Any]) -> RpcFailure:
    with pytest.raises(RpcFailure) as info:
        await call
    return info.value


def operator(engine: RunningEngine, people: People) -> GameClient:
    """Tables of the three players come from an operator (or matchmaking): a player's own table seats
    only them and the house bots."""
    return people.client(engine.address, people.ops)


def test_errors_have_their_status_and_append_nothing(tmp_path: Path, people: People) -> None:
    async def scenario(engine: RunningEngine) -> None:
        ann, bob, cyd = people.clients(engine.address)
        ops = operator(engine, people)
        created = await ops.create_game("kalooki", people.ids, "t1", turn_timeout_ms=NO_TIMER)
        turn = created.view.turn
        mover, other = ([ann, bob, cyd][turn], [ann, bob, cyd][(turn + 1) % 3])
        log = engine.stores.log
        assert log.last_seq("t1") == 2
        draw = gs.Action(draw_from_stock=gs.DrawFromStock())
        discard = gs.Action(discard=gs.Discard(card=events_pb2.Card(rank=2, suit=events_pb2.SUIT_CLUBS)))

        assert (await refused(ann.view("nope"))).status is grpc.StatusCode.NOT_FOUND
        assert (await refused(ann.submit("nope", 0, draw))).status is grpc.StatusCode.NOT_FOUND
        stranger = GameClient(engine.address, "not-a-token", retry_for_s=0)
        assert (await refused(stranger.view("t1"))).status is grpc.StatusCode.UNAUTHENTICATED
        # Another player's seat, for acting and for looking.
        denied = await refused(other.submit("t1", turn, draw))
        assert denied.status is grpc.StatusCode.PERMISSION_DENIED
        assert (await refused(other.view("t1", turn))).status is grpc.StatusCode.PERMISSION_DENIED
        assert (await refused(other.legal_actions("t1", turn))).status is grpc.StatusCode.PERMISSION_DENIED
        with pytest.raises(RpcFailure) as streamed:  # a stream is refused with the same status
            async for _ in other.updates("t1", turn):
                pass
        assert streamed.value.status is grpc.StatusCode.PERMISSION_DENIED
        # Malformed requests.
        for bad in (
            mover.submit("t1", turn, gs.Action()),
            mover.submit("t1", turn, draw, command_id="x" * 200),
            mover.submit("t1", 7, draw),
            mover.submit("bad id!", turn, draw),
            ops.create_game("no-such-variant", people.ids),
            ops.create_game("kalooki", people.ids, options={"no_such_option": 1}),
        ):
            assert (await refused(bad)).status is grpc.StatusCode.INVALID_ARGUMENT
        # Moves the rules refuse carry the rule code.
        early = await refused(mover.submit("t1", turn, discard))
        assert early.status is grpc.StatusCode.FAILED_PRECONDITION and early.code == "must_draw_first"
        wrong = await refused(other.submit("t1", (turn + 1) % 3, draw))
        assert wrong.status is grpc.StatusCode.FAILED_PRECONDITION and wrong.code == "not_your_turn"
        assert log.last_seq("t1") == 2
        for client in (ann, bob, cyd, ops, stranger):
            await client.close()

    run(tmp_path, people, scenario)


def test_a_retried_command_id_returns_the_original_outcome(tmp_path: Path, people: People) -> None:
    async def scenario(engine: RunningEngine) -> None:
        seats = people.clients(engine.address)
        ops = operator(engine, people)
        created = await ops.create_game("rummy40", people.ids, "t2", turn_timeout_ms=NO_TIMER)
        turn = created.view.turn
        draw = gs.Action(draw_from_stock=gs.DrawFromStock())
        first = await seats[turn].submit("t2", turn, draw, command_id="c-1")
        again = await seats[turn].submit("t2", turn, draw, command_id="c-1")
        assert not first.duplicate and again.duplicate
        assert (again.first_seq, again.last_seq) == (first.first_seq, first.last_seq)
        assert not first.HasField("view")  # the view after it arrives on the seat's stream ...
        shown = await seats[turn].submit("t2", turn, draw, command_id="c-1", include_view=True)
        assert shown.view.seq == first.last_seq and shown.view.seat == turn and shown.view.hand  # ... or here
        assert engine.stores.log.last_seq("t2") == first.last_seq
        # The same game id and table again is the same game; another table under that id is refused.
        same = await ops.create_game("rummy40", people.ids, "t2", turn_timeout_ms=NO_TIMER)
        assert same.game_id == "t2"
        clash = await refused(ops.create_game("rummy40", [people.ids[0], "y"], "t2"))
        assert clash.status is grpc.StatusCode.ALREADY_EXISTS
        for client in (*seats, ops):
            await client.close()

    run(tmp_path, people, scenario)


@pytest.mark.parametrize("variant", PLAYABLE_VARIANTS)
def test_bots_play_a_game_without_leaks_then_replay_and_verify(
    tmp_path: Path, people: People, variant: str
) -> None:
    async def scenario(engine: RunningEngine) -> None:
        seats = people.clients(engine.address)
        ops = operator(engine, people)
        options = {"deals_per_match": 1} if variant == "rummy40" else {}
        created = await ops.create_game(variant, people.ids, "g", options=options, turn_timeout_ms=NO_TIMER)
        spectator = people.client(engine.address, people.outsider, retry_for_s=10)
        watched: list[gs.GameUpdate] = []

        async def watch() -> None:
            async for update in spectator.updates("g"):
                watched.append(update)

        watching = asyncio.create_task(watch())
        early = await seats[0].history("g")  # while it runs: no deck, as a spectator sees it
        assert list(early.entries[0].redacted) == ["deck"] and not early.entries[0].event.game_started.deck
        bots = [BotPlayer(client, "g", seat, keep=True) for seat, client in enumerate(seats)]
        finals = await asyncio.gather(*(bot.play() for bot in bots))
        await asyncio.wait_for(watching, 10)
        assert created.view.seed_commitment == finals[0].seed_commitment
        assert finals[0].phase == gs.PHASE_GAME_OVER and finals[0].seed

        history = await seats[1].history("g")
        truth = states_by_seq(history.entries)
        final = truth[max(truth)]
        for seat, bot in enumerate(bots):
            assert bot.stats.messages and not leaks(bot.stats.messages, seat, truth)
            assert any(m.legal_actions for m in bot.stats.messages)
            assert not action_leaks(bot.stats.messages, seat, truth)
        assert watched and not leaks(watched, None, truth) and not action_leaks(watched, None, truth)
        assert list(finals[0].totals) == list(final.totals) and list(finals[0].winners) == list(final.winners)
        # Replay at any seq: after the end the players and operators see every hand.
        middle = max(truth) // 2
        at = await seats[2].state_at("g", middle, seat=2)
        assert [len(h.cards) for h in at.hands] == [len(h) for h in truth[middle].hands]
        # The stock top card first, as the decks in the events; the deprecated field top card last.
        assert wire.cards_from_pb(at.stock_top_first) == truth[middle].stock[::-1]
        assert list(at.stock) == list(reversed(at.stock_top_first))
        assert at.view.seq == middle
        outsider = people.client(engine.address, people.outsider)
        assert not (await outsider.state_at("g", middle)).hands
        as_spectator = await outsider.history("g")  # not a player: still a spectator's history
        assert len(as_spectator.entries) == max(truth) and not as_spectator.entries[0].event.game_started.deck
        assert len((await ops.history("g")).entries) == max(truth)
        verified = await outsider.verify_shuffle("g")
        assert verified.verified and verified.commitment_matches and verified.shuffles
        for client in (*seats, spectator, outsider, ops):
            await client.close()

    run(tmp_path, people, scenario)


def test_a_stream_resumes_after_the_last_seq_seen(tmp_path: Path, people: People) -> None:
    async def scenario(engine: RunningEngine) -> None:
        seats = people.clients(engine.address)
        ops = operator(engine, people)
        await ops.create_game("kalooki", people.ids, "r", turn_timeout_ms=NO_TIMER)
        bots = [BotPlayer(client, "r", seat) for seat, client in enumerate(seats)]
        await asyncio.gather(*(bot.play() for bot in bots))
        total = (await seats[0].view("r")).seq
        # A client that saw up to seq 5 gets 6..total, in order, once each; then the stream ends.
        resumed = [update.seq async for update in seats[0].updates("r", 0, after_seq=5)]
        assert resumed == list(range(6, total + 1))
        fresh = [update async for update in seats[0].updates("r", 0)]
        assert [(u.seq, u.event_type) for u in fresh] == [(total, "view")]
        for client in (*seats, ops):
            await client.close()

    run(tmp_path, people, scenario)


def test_the_turn_timer_plays_for_absent_players_and_marks_them_away(tmp_path: Path, people: People) -> None:
    async def scenario(engine: RunningEngine) -> None:
        seats = people.clients(engine.address)
        ops = operator(engine, people)
        created = await ops.create_game("kalooki", people.ids, "slow", turn_timeout_ms=50)
        first = created.view.turn
        assert created.view.HasField("turn_deadline")
        for _ in range(100):
            await asyncio.sleep(0.05)
            view = await seats[first].view("slow", first)
            if all(s.away for s in view.seats):
                break
        assert all(s.away and s.timeouts >= 2 for s in view.seats)
        seq = view.seq
        await asyncio.sleep(0.3)  # away seats are played after the grace period, not the full timer
        view = await seats[first].view("slow", first)
        assert view.seq > seq
        entries = await engine.app.history("slow")
        by_engine = engine_commands(message for _, message, _ in entries)
        assert all(message.command_id in by_engine for _, message, _ in entries[2:])
        kinds = [message.WhichOneof("event") for _, message, _ in entries]
        assert kinds[:2] == ["game_started", "table_seated"]
        assert kinds.count("player_away") == 3
        for client in (*seats, ops):
            await client.close()

    run(tmp_path, people, scenario, away_after=2, away_grace_ms=20)


def test_legal_actions_come_on_the_last_update_of_a_command(tmp_path: Path, people: People) -> None:
    """A turn the timer plays is several events of one command: a stream lists a seat's actions only on
    the last, where the game is. The timed-out seat could still draw after the timeout event and discard
    after the draw, but the engine has played both: listed there, a client acting would be refused."""

    async def scenario(engine: RunningEngine) -> None:
        seats = people.clients(engine.address)
        ops = operator(engine, people)
        created = await ops.create_game("kalooki", people.ids, "timed", turn_timeout_ms=300)
        first = created.view.turn
        played: list[gs.GameUpdate] = []
        async for update in seats[first].updates("timed", first):
            if update.by_timer:
                played.append(update)
                if update.view.turn != first:  # the discard that ends the played turn: the command's last
                    break
        kinds = [u.event_type for u in played]
        assert kinds[0] == "turn_timed_out" and len(kinds) >= 3, kinds  # the timeout, a draw, a discard
        listed = [(u.event_type, len(u.legal_actions)) for u in played]
        assert all(count == 0 for _, count in listed), listed
        for client in (*seats, ops):
            await client.close()

    run(tmp_path, people, scenario)


def test_health_serves_and_reflection_lists_the_service(tmp_path: Path, people: People) -> None:
    async def scenario(engine: RunningEngine) -> None:
        async with grpc.aio.insecure_channel(engine.address) as channel:
            health: Any = health_pb2_grpc.HealthStub(channel)  # the typed stubs describe sync channels
            reply = await health.Check(health_pb2.HealthCheckRequest(service="rummy.game.v1.GameService"))
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
            stub: Any = reflection_pb2_grpc.ServerReflectionStub(channel)  # type: ignore[arg-type]
            request = reflection_pb2.ServerReflectionRequest(list_services="")
            async for answer in stub.ServerReflectionInfo(iter([request])):
                names = {s.name for s in answer.list_services_response.service}
                assert {"rummy.game.v1.GameService", "grpc.health.v1.Health"} <= names
                break

    run(tmp_path, people, scenario)


def test_after_a_restart_the_turn_timer_plays_on_in_games_nobody_touches(
    tmp_path: Path, people: People
) -> None:
    async def scenario() -> None:
        config = EngineConfig(
            address="127.0.0.1:0",
            data_dir=str(tmp_path),
            turn_timeout_ms=NO_TIMER,
            identity=people.identity.address,
        )
        engine = await start_engine(config)
        client = people.client(engine.address, people.ops)
        await client.create_game("kalooki", people.ids, "left", turn_timeout_ms=50)
        await client.create_game("kalooki", people.ids, "kept", turn_timeout_ms=NO_TIMER)
        await client.close()
        await engine.stop()
        log = EmbeddedEventLog(tmp_path / "events.sqlite")
        before = log.last_seq("left")
        engine = await start_engine(config)  # nobody calls it: the timer must still run
        try:
            for _ in range(100):
                await asyncio.sleep(0.05)
                if log.last_seq("left") > before + 2:
                    break
            assert log.last_seq("left") > before + 2
            assert log.last_seq("kept") == 2
        finally:
            await engine.stop()
            log.close()

    asyncio.run(scenario())


def test_away_and_returned_seats_survive_a_restart(tmp_path: Path, people: People) -> None:
    """Away status lives in the log (PlayerAway/PlayerReturned), not in the engine's memory."""

    async def scenario() -> None:
        config = EngineConfig(
            address="127.0.0.1:0",
            data_dir=str(tmp_path),
            away_after=1,
            away_grace_ms=NO_TIMER,
            identity=people.identity.address,
        )
        engine = await start_engine(config)
        seats = people.clients(engine.address)
        ops = people.client(engine.address, people.ops)
        await ops.create_game("kalooki", people.ids, "afk", turn_timeout_ms=30)
        for _ in range(100):  # one timeout each marks a seat away; away seats then wait for the grace
            await asyncio.sleep(0.05)
            view = await seats[0].view("afk", 0)
            if all(s.away for s in view.seats):
                break
        assert all(s.away for s in view.seats)
        back = (view.turn + 1) % 3
        returned = await seats[back].return_to_table("afk", back)
        assert [s.away for s in returned.seats] == [seat != back for seat in range(3)]
        for client in (*seats, ops):
            await client.close()
        await engine.stop()

        engine = await start_engine(config)
        seats = people.clients(engine.address)
        try:
            after = await seats[0].view("afk", 0)
            assert after.seq == returned.seq
            assert [s.away for s in after.seats] == [seat != back for seat in range(3)]
            assert after.seats[back].timeouts == 0
            # The seat to move is still away: its timer is the away grace, not the 30 ms turn limit.
            assert after.turn_deadline.ToSeconds() > time.time() + 60
        finally:
            for client in seats:
                await client.close()
            await engine.stop()

    asyncio.run(scenario())


def test_who_may_create_a_table_act_and_read_a_finished_history(tmp_path: Path, people: People) -> None:
    """Nobody is seated without asking: a player's own table seats them and the house bots only;
    matchmaking's service seats the people who queued; an operator's tables are casual."""

    async def scenario(engine: RunningEngine) -> None:
        ann, bob, _ = people.players
        stranger = people.client(engine.address, people.outsider)
        operator_ = people.client(engine.address, people.ops)
        service = GameClient(engine.address, people.identity.service_token("matchmaking"), retry_for_s=0)
        denied = await refused(stranger.create_game("rummy40", people.ids, "forced"))
        assert denied.status is grpc.StatusCode.PERMISSION_DENIED and denied.code == "not_at_table"
        farm = await refused(
            people.client(engine.address, ann).create_game("rummy40", [ann.id, bob.id], "farm")
        )
        assert farm.status is grpc.StatusCode.PERMISSION_DENIED and farm.code == "not_consented"
        assert engine.stores.log.last_seq("forced") == 0 and engine.stores.log.last_seq("farm") == 0
        await service.create_game(
            "rummy40",
            people.ids,
            "queued",
            turn_timeout_ms=NO_TIMER,
            player_names=["A", "B", "C"],
            rated=True,
        )
        await operator_.create_game("rummy40", people.ids, "ops-table", turn_timeout_ms=NO_TIMER)
        own = await people.client(engine.address, ann).create_game(
            "rummy40", [ann.id, "bot-ada"], "private", turn_timeout_ms=NO_TIMER
        )
        assert [(s.player_id, s.name, s.bot) for s in own.view.seats] == [
            (ann.id, "ann", False),
            ("bot-ada", "bot-ada", True),
        ]
        entries = await engine.app.history("queued")
        seated = entries[1][1].table_seated
        assert list(seated.player_ids) == people.ids and seated.requested_by == "matchmaking"
        assert list(seated.player_names) == ["A", "B", "C"] and seated.rated
        ops_seated = (await engine.app.history("ops-table"))[1][1].table_seated
        assert not ops_seated.rated and ops_seated.requested_by == people.ops.id
        # A service or operator token never acts or looks for a seat.
        turn = (await operator_.view("queued")).turn
        draw = gs.Action(draw_from_stock=gs.DrawFromStock())
        for impostor in (service, operator_):
            assert (await refused(impostor.submit("queued", turn, draw))).code == "not_your_seat"
        # A finished game's full history: its players and operators; a stranger's is a spectator's.
        # (the turn timer plays it out: away after one timeout, then after the 1 ms grace)
        await service.create_game(
            "rummy40", [ann.id, bob.id], "done", options={"deals_per_match": 1}, turn_timeout_ms=1
        )
        for _ in range(400):
            await asyncio.sleep(0.05)
            if (await operator_.view("done")).phase == gs.PHASE_GAME_OVER:
                break
        assert (await operator_.history("done")).entries
        assert (await people.client(engine.address, bob).history("done")).entries
        assert (await refused(service.history("done"))).status is grpc.StatusCode.PERMISSION_DENIED
        assert (await stranger.history("done")).entries[0].redacted == ["deck"]
        for client in (stranger, service, operator_):
            await client.close()

    run(tmp_path, people, scenario, away_after=1, away_grace_ms=1)


def test_the_seed_is_derived_by_the_engine_and_stored_nowhere_before_the_end(
    tmp_path: Path, people: People
) -> None:
    async def scenario(engine: RunningEngine) -> None:
        ops = operator(engine, people)
        created = await ops.create_game("kalooki", people.ids, "open", turn_timeout_ms=NO_TIMER)
        seed = game_seed(engine.config.seed_key, "open")
        assert created.view.seed_commitment == seed_commitment(seed) and not created.view.seed
        other = game_seed("another key", "open")
        assert other != seed and game_seed(engine.config.seed_key, "other") != seed
        entries = await engine.app.history("open")
        stored = b"".join(path.read_bytes() for path in tmp_path.glob("*.sqlite*"))
        assert entries and seed_commitment(seed).encode() in stored  # the scan reads the stores
        for form in (seed, seed.hex().encode()):
            assert form not in stored
        await ops.close()

    run(tmp_path, people, scenario)


def test_a_live_history_shows_each_caller_only_what_they_may_see(
    stores: dict[str, Any], people: People
) -> None:
    """A running game's history, as a late spectator or a reloaded page reads it: the drawer sees the
    card it drew from the stock, the others and spectators do not, nobody sees a deck."""

    async def scenario(engine: RunningEngine) -> None:
        seats = people.clients(engine.address)
        outsider = people.client(engine.address, people.outsider)
        created = await operator(engine, people).create_game(
            "kalooki", people.ids, "live", turn_timeout_ms=NO_TIMER
        )
        turn = created.view.turn
        await seats[turn].submit("live", turn, gs.Action(draw_from_stock=gs.DrawFromStock()))
        other = (turn + 1) % len(seats)
        mine, theirs, spectator = (
            await seats[turn].history("live", seat=turn),
            await seats[other].history("live", seat=other),
            await outsider.history("live"),
        )
        for history in (mine, theirs, spectator):
            assert [e.redacted for e in history.entries][:2] == [["deck"], []]
            assert not history.entries[0].event.game_started.deck
        drawn = [h.entries[-1] for h in (mine, theirs, spectator)]
        assert [d.event.WhichOneof("event") for d in drawn] == ["card_drawn"] * 3
        assert drawn[0].event.card_drawn.HasField("card") and not drawn[0].redacted
        for hidden in drawn[1:]:
            assert not hidden.event.card_drawn.HasField("card") and list(hidden.redacted) == ["card"]
        words = [
            Narrator(seat).lines(h.entries)[-1][1]
            for seat, h in zip((turn, other, None), (mine, theirs, spectator), strict=True)
        ]
        card = wire.card_from_pb(drawn[0].event.card_drawn.card)
        assert words[0] == f"You drew {card_words(wire.card_to_pb(card))} from the stock"
        assert words[1:] == [f"{people.ids[turn]} drew from the stock"] * 2  # an operator's table: ids
        assert [e.event.seq for e in (await outsider.history("live", after_seq=2)).entries] == [3]
        assert (await refused(outsider.history("live", seat=turn))).code == "not_your_seat"
        for client in (*seats, outsider):
            await client.close()

    run_on(stores, scenario)
