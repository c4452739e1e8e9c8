"""The seats' own seeds over gRPC, in process: the window, the refusals, the deal, replay and verify."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import grpc
from rummy.game.v1 import game_service_pb2 as gs
from rummy_client import GameClient
from rummy_client.bots import BotPlayer
from rummy_contracts import event_format
from rummy_contracts.projection import GameProjection
from rummy_engine.config import EngineConfig
from rummy_engine.engine import RunningEngine
from rummy_engine.seeds import game_seed
from rummy_rules.cards import make_deck, shuffle
from rummy_rules.events import DealStarted, Event, GameStarted
from rummy_rules.game import deal_seed, mixed_seed, start

from .conftest import People
from .test_service import NO_TIMER, operator, refused, run, started

ANN, BOB, CYD = b"ann's own seed!!", bytes(range(64)), b"\xff" * 32
SHORT = {"deals_per_match": 1}


async def _records(engine: RunningEngine, game_id: str) -> list[tuple[str, str]]:
    """(event kind, command id) of every record of the game."""
    return [(record.event_type, record.command_id) for record, _, _ in await engine.app.history(game_id)]


async def _play_out(clients: list[GameClient], game_id: str) -> None:
    await asyncio.gather(*(BotPlayer(client, game_id, seat).play() for seat, client in enumerate(clients)))


def test_every_seat_s_seed_deals_at_once_and_refused_seeds_change_nothing(
    tmp_path: Path, people: People
) -> None:
    async def scenario(engine: RunningEngine) -> None:
        ann, bob, cyd = seats = people.clients(engine.address)
        ops = operator(engine, people)
        created = await ops.create_game("rummy40", people.ids, "s1", options=SHORT, turn_timeout_ms=NO_TIMER)
        assert (created.view.deal, created.view.phase) == (0, gs.PHASE_DEAL_OVER)
        log = engine.stores.log
        for bad, code in ((b"x" * 15, "bad_seed_length"), (b"", "bad_seed_length"), (b"x" * 65, "too_long")):
            failure = await refused(ann.contribute_seed("s1", 0, bad))
            assert (failure.status, failure.code) == (grpc.StatusCode.INVALID_ARGUMENT, code)
        denied = await refused(bob.contribute_seed("s1", 0, BOB))
        assert denied.status is grpc.StatusCode.PERMISSION_DENIED
        assert log.last_seq("s1") == 2
        sent = await ann.contribute_seed("s1", 0, ANN)
        assert sent.seq == 3 and sent.view.deal == 0
        assert (await ann.contribute_seed("s1", 0, ANN)).seq == 3  # a retry, answered again
        again = await refused(ann.contribute_seed("s1", 0, BOB))
        assert (again.status, again.code) == (grpc.StatusCode.ALREADY_EXISTS, "seed_already_sent")
        assert log.last_seq("s1") == 3
        await bob.contribute_seed("s1", 1, BOB)
        last = await cyd.contribute_seed("s1", 2, CYD)
        assert last.view.deal == 1 and last.view.phase == gs.PHASE_DRAW and len(last.view.hand) == 13
        assert [kind for kind, _ in await _records(engine, "s1")] == [
            "game_started",
            "table_seated",
            "seed_contributed",
            "seed_contributed",
            "seed_contributed",
            "deal_started",
        ]
        late = await refused(cyd.contribute_seed("s1", 2, ANN))
        assert late.code == "seed_already_sent" and log.last_seq("s1") == 6

        await _play_out(seats, "s1")
        server = game_seed(engine.config.seed_key, "s1")
        checked = await ops.verify_shuffle("s1")
        assert checked.verified and checked.seed == server and list(checked.seat_seeds) == [ANN, BOB, CYD]
        assert checked.shuffle_seed == mixed_seed(server, (ANN, BOB, CYD)) != server
        assert [c.name for c in checked.shuffles][:1] == ["deal 1"] and checked.shuffles[0].seq == 6
        opening = [event for _, _, event in await engine.app.history("s1") if isinstance(event, DealStarted)]
        assert opening[0].deck != start("rummy40", 3, server).deck  # the seats' seeds moved every card
        for client in (*seats, ops):
            await client.close()

    run(tmp_path, people, scenario, seed_window_ms=NO_TIMER)


def test_the_window_closes_with_the_seeds_sent_and_the_log_replays_to_the_same_deal(
    tmp_path: Path, people: People
) -> None:
    async def scenario(engine: RunningEngine) -> None:
        ann, bob, _ = seats = people.clients(engine.address)
        ops = operator(engine, people)
        await ops.create_game("kalooki", people.ids, "s2", turn_timeout_ms=NO_TIMER)
        await ann.contribute_seed("s2", 0, ANN)
        for _ in range(100):  # the window is 300 ms
            if engine.stores.log.last_seq("s2") == 4:
                break
            await asyncio.sleep(0.05)
        records = await _records(engine, "s2")
        assert records[2:] == [("seed_contributed", "engine/seed/0"), ("deal_started", "engine/deal/first")]
        late = await refused(bob.contribute_seed("s2", 1, BOB))
        assert (late.status, late.code) == (grpc.StatusCode.FAILED_PRECONDITION, "seed_window_closed")
        assert engine.stores.log.last_seq("s2") == 4
        history = await engine.app.history("s2")
        deal = history[3][2]
        assert isinstance(deal, DealStarted)
        live = (await engine.app.game("s2")).state
        rules = live.game.rules
        mixed = mixed_seed(game_seed(engine.config.seed_key, "s2"), (ANN, b"", b""))
        assert deal.deck == shuffle(make_deck(rules.packs, rules.jokers), deal_seed(mixed, 1))
        # What a restarted engine folds from the log is the state this one dealt.
        projection, folded = GameProjection(), None
        for record, message, event in history:
            folded = projection.fold(folded, record.command_id, record.seq, event, message.command_digest)
        assert folded is not None and (folded.game, folded.seeds) == (live.game, live.seeds)
        for client in (*seats, ops):
            await client.close()

    run(tmp_path, people, scenario, seed_window_ms=300)


def test_a_game_no_seat_sends_a_seed_to_is_today_s_game(tmp_path: Path, people: People) -> None:
    """The same game id and key on an engine dealing at creation and on one with a seed window no seat
    uses: the same deal, and the same game played by the same bots, event for event."""

    async def game_on(window_ms: int, where: Path) -> list[Event]:
        config = EngineConfig(
            address="127.0.0.1:0",
            data_dir=str(where),
            identity=people.identity.address,
            seed_window_ms=window_ms,
        )
        engine = await started(config)
        try:
            seats = people.clients(engine.address)
            ops = operator(engine, people)
            await ops.create_game("rummy40", people.ids, "same", options=SHORT, turn_timeout_ms=NO_TIMER)
            await asyncio.gather(
                *(BotPlayer(c, "same", seat, seed=False).play() for seat, c in enumerate(seats))
            )
            events = [event for _, _, event in await engine.app.history("same")]
            for client in (*seats, ops):
                await client.close()
            return event_format.rules_events(events)
        finally:
            await engine.stop()

    async def main() -> None:
        today = await game_on(0, tmp_path / "today")
        waited = await game_on(200, tmp_path / "waited")
        first, opening = today[0], waited[1]
        assert isinstance(first, GameStarted) and isinstance(opening, DealStarted)
        assert waited[0] == replace(first, deck=())
        assert (opening.deal, opening.dealer, opening.deck) == (1, first.dealer, first.deck)
        assert waited[2:] == today[1:]

    asyncio.run(main())
