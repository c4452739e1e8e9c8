"""End to end: matchmaking, engine and scoring on real Kafka and Redis, from queue to leaderboard.

Twelve players queue for kalooki (tables of 3-4, a prize pool per table); tables form; bots play every
game through the engine over gRPC; scoring publishes hand and match results, payouts and rating
changes. The twelve queue again: matchmaking pairs them on the ratings scoring published. A contract
tournament of 8 is played by bots, one contract round per table per tournament round, and its tables
rotate as the spec says after every round. Finally scoring restarts under a new consumer group,
replays the game topic from the beginning, and no result, rating or published event changes.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import grpc
import pytest
import redis
from rummy.game.v1 import events_pb2 as ev
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.matchmaking.v1 import matchmaking_pb2_grpc as mm_grpc
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy.scoring.v1 import scoring_pb2_grpc as sc_grpc
from rummy_client import GameClient
from rummy_client.bots import BotPlayer
from rummy_client.client import RpcFailure
from rummy_engine.config import EngineConfig
from rummy_engine.engine import RunningEngine, start_engine
from rummy_identity.testing import IdentityProcess, Player
from rummy_infra.reading import read_until
from rummy_matchmaking.config import MatchmakingConfig
from rummy_matchmaking.pairing import PairingRules
from rummy_matchmaking.service import RunningMatchmaking, start_matchmaking
from rummy_rules.scoring import prize_split
from rummy_rules.variants import rules_for
from rummy_scoring.config import ScoringConfig
from rummy_scoring.service import RunningScoring, start_scoring
from rummy_store.kafka_log import KafkaEventLog

PLAYERS = [f"p{i:02d}" for i in range(12)]  # account names: the queue's twelve
ENTRANTS = [f"c{i}" for i in range(8)]  # and the tournament's eight
POOL = 1_000
SETTLE_S = 15.0  # by then every window has widened to take any rating the test produces
WINDOW = PairingRules(base_window=0.5, widen_per_s=1.0, max_window=50.0, fill_after_s=1.0)


@dataclasses.dataclass
class Platform:
    engine: RunningEngine
    matchmaking: RunningMatchmaking
    scoring: RunningScoring
    scoring_config: ScoringConfig
    topics: dict[str, str]
    people: dict[str, Player]  # every account of the test, by id (the player id at tables)
    operator: Player

    def auth(self, player_id: str) -> tuple[tuple[str, str], ...]:
        return self.people[player_id].auth()


async def _until(check: Any, timeout_s: float, what: str) -> Any:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while True:
        result = await check()
        if result:
            return result
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.2)


async def _platform(kafka: str, redis_url: str, prefix: str, identity: IdentityProcess) -> Platform:
    topics = {
        "games": f"{prefix}.rummy.game.events.v1",
        "tables": f"{prefix}.rummy.matchmaking.events.v1",
        "scores": f"{prefix}.rummy.scoring.events.v1",
    }
    engine = await start_engine(
        EngineConfig(
            address="127.0.0.1:0",
            kafka=kafka,
            redis=redis_url,
            topic=topics["games"],
            key_prefix=f"{prefix}:",
            turn_timeout_ms=0,  # tournament tables have no turn timer: their bots never stop
            tables=topics["tables"],
            identity=identity.address,
        )
    )
    scoring_config = ScoringConfig(
        address="127.0.0.1:0",
        kafka=kafka,
        redis=redis_url,
        game_topic=topics["games"],
        matchmaking_topic=topics["tables"],
        topic=topics["scores"],
        key_prefix=f"{prefix}:",
        group=f"{prefix}.scoring",
    )
    scoring = await start_scoring(scoring_config)
    matchmaking = await start_matchmaking(
        MatchmakingConfig(
            address="127.0.0.1:0",
            kafka=kafka,
            topic=topics["tables"],
            scoring_topic=topics["scores"],
            key_prefix=f"{prefix}:",
            pairing_interval_ms=50,
            pairing={"kalooki": WINDOW},
            options={"kalooki": {"prize_pool": POOL}},
            # The turn timer, as in production: a seat whose bot stops acting is played by the engine
            # after 3 s instead of stopping the table.
            turn_timeout_ms=3_000,
            identity=identity.address,
        )
    )
    suffix = prefix[-6:]
    accounts = [identity.player(f"{name}-{suffix}") for name in (*PLAYERS, *ENTRANTS)]
    people = {account.id: account for account in accounts}
    return Platform(engine, matchmaking, scoring, scoring_config, topics, people, identity.operator())


async def _watch(stub: Any, auth: tuple[tuple[str, str], ...], ticket_id: str) -> mm.WatchTicketResponse:
    """The ticket's last state: SEATED or CANCELLED."""
    last = None
    async for reply in stub.WatchTicket(mm.WatchTicketRequest(ticket_id=ticket_id), metadata=auth):
        last = reply
    assert last is not None and last.state in (mm.TICKET_STATE_SEATED, mm.TICKET_STATE_CANCELLED)
    final: mm.WatchTicketResponse = last
    return final


async def _play(engine_address: str, player: Player, seated: mm.WatchTicketResponse) -> None:
    seat = next(s for s in seated.seats if s.player_id == player.id)  # played with the player's own token
    async with GameClient(engine_address, player.token, retry_for_s=60) as client:

        async def exists() -> bool:  # the engine creates the game from TableFormed, asynchronously
            try:
                await client.view(seated.game_id, seat.seat)
            except RpcFailure as failure:
                if failure.status != grpc.StatusCode.NOT_FOUND:
                    raise
                return False
            return True

        await _until(exists, 60, f"game {seated.game_id}")
        await BotPlayer(client, seated.game_id, seat.seat, "greedy").play()


async def _queue_round(
    platform: Platform, mm_stub: Any, order: list[str]
) -> tuple[dict[str, mm.EnqueueResponse], dict[str, mm.WatchTicketResponse]]:
    """Everyone in `order` queues (tables of 3-4) and the seated play their games.

    Rating groups can leave a remainder no table of 3-4 takes (12 = 4 + 4 + 3 + 1); a real queue
    would seat it with later players, the test cancels it after SETTLE_S and returns the seated only.
    """
    tickets = {}
    auths = {player: platform.auth(player) for player in order}  # tokens first: queueing is then quick
    for player in order:
        request = mm.EnqueueRequest(variant="kalooki", min_players=3, max_players=4)
        tickets[player] = await mm_stub.Enqueue(request, metadata=auths[player])
    watches = {p: asyncio.create_task(_watch(mm_stub, platform.auth(p), tickets[p].ticket_id)) for p in order}
    await asyncio.wait(watches.values(), timeout=SETTLE_S)
    for player, task in watches.items():
        if not task.done():
            reply = await mm_stub.Cancel(
                mm.CancelRequest(ticket_id=tickets[player].ticket_id), metadata=platform.auth(player)
            )
            assert reply.state == mm.TICKET_STATE_CANCELLED
    finals = {p: await asyncio.wait_for(task, 30) for p, task in watches.items()}
    seated = {p: f for p, f in finals.items() if f.state == mm.TICKET_STATE_SEATED}
    await asyncio.wait_for(
        asyncio.gather(*(_play(platform.engine.address, platform.people[p], seated[p]) for p in seated)), 180
    )
    return tickets, seated


async def _match(sc_stub: Any, game_id: str) -> sc.MatchScored:
    async def scored() -> sc.MatchScored | None:
        try:
            reply = await sc_stub.GetMatchResult(sc.GetMatchResultRequest(game_id=game_id))
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.NOT_FOUND:
                raise
            return None
        return reply.match if reply.HasField("match") else None

    result: sc.MatchScored = await _until(scored, 60, f"the result of {game_id}")
    return result


def _redis_dump(client: redis.Redis, prefix: str) -> dict[bytes, Any]:
    """Scoring's state in Redis, less the outbox relay's lease: who relays is not a result."""
    dump: dict[bytes, Any] = {}
    for key in client.scan_iter(f"{prefix}:scoring:*"):
        if key.endswith(b":lease"):
            continue
        kind = client.type(key)
        if kind == b"string":
            dump[key] = client.get(key)
        elif kind == b"list":
            dump[key] = client.lrange(key, 0, -1)
        elif kind == b"hash":
            dump[key] = client.hgetall(key)
        elif kind == b"zset":
            dump[key] = client.zrange(key, 0, -1, withscores=True)
        elif kind == b"set":
            dump[key] = client.smembers(key)
    return dump


async def _scenario(kafka: str, redis_url: str, prefix: str, identity: IdentityProcess) -> None:
    platform = await _platform(kafka, redis_url, prefix, identity)
    players = list(platform.people)[: len(PLAYERS)]
    channels = [
        grpc.aio.insecure_channel(platform.matchmaking.address),
        grpc.aio.insecure_channel(platform.scoring.address),
    ]
    mm_stub: Any = mm_grpc.MatchmakingServiceStub(channels[0])
    sc_stub: Any = sc_grpc.ScoringServiceStub(channels[1])
    client = redis.Redis.from_url(redis_url)
    try:
        # --- round 1: everyone new (rating 0); tables form first come, first served ----------------------
        tickets1, seated1 = await _queue_round(platform, mm_stub, players)
        games1 = sorted({s.game_id for s in seated1.values()})
        assert all(t.rating == 0 for t in tickets1.values())
        seats1 = sorted((s.game_id, s.seats[0].seat) for s in seated1.values())
        assert len(set(seats1)) == 12 and len(games1) == 3  # FIFO, everyone at 0: three full tables of 4
        matches1 = {g: await _match(sc_stub, g) for g in games1}
        for game_id, match in matches1.items():
            # Kalooki D17: the pool is split by the rules engine's formula, to the unit.
            hands = (await sc_stub.GetMatchResult(sc.GetMatchResultRequest(game_id=game_id))).hands
            last = hands[-1]
            rules = rules_for("kalooki", len(match.player_ids), prize_pool=POOL)
            losers = {s: p for s, p in enumerate(last.penalties) if s != last.winner}
            split = prize_split(POOL, last.winner, losers, rules, last.kalooki)
            assert list(match.payouts) == [split[s] for s in range(len(match.player_ids))]
            assert sum(match.payouts) == POOL and match.winners == [match.player_ids[last.winner]]
        winners1 = {w for m in matches1.values() for w in m.winners}
        board = await sc_stub.GetLeaderboard(sc.GetLeaderboardRequest(variant="kalooki", period="all"))
        assert {e.player_id for e in board.entries} == winners1 and all(e.wins == 1 for e in board.entries)
        payouts = await sc_stub.GetPayouts(sc.GetPayoutsRequest(player_id=next(iter(winners1))))
        assert payouts.total > 0

        # --- ratings reach matchmaking through scoring's events ----------------------------------------
        ratings: dict[str, float] = {}
        for player in players:
            history = await sc_stub.GetRatingHistory(
                sc.GetRatingHistoryRequest(player_id=player, variant="kalooki")
            )
            assert len(history.changes) == 1
            ratings[player] = history.ordinal

        async def matchmaking_knows() -> bool:
            return all(platform.matchmaking.app.rating("kalooki", p)[0] == 1 for p in players)

        await _until(matchmaking_knows, 60, "matchmaking to read the new ratings")
        assert all(ratings[w] > ratings[p] for w in winners1 for p in players if p not in winners1)

        # --- round 2: queued in reverse order; tables form by the new ratings --------------------------
        tickets2, seated2 = await _queue_round(platform, mm_stub, players[::-1])
        for player, ticket in tickets2.items():
            assert ticket.rating == pytest.approx(ratings[player])  # matchmaking pairs on scoring's ratings
        by_game: dict[str, list[str]] = {}
        for player, seat in seated2.items():
            by_game.setdefault(seat.game_id, []).append(player)
        for table in by_game.values():
            spread = max(ratings[p] for p in table) - min(ratings[p] for p in table)
            waited = max(seated2[p].waited_s for p in table)
            assert spread <= WINDOW.base_window + WINDOW.widen_per_s * waited + 1e-9
        # Not FIFO: in queue order (reversed) the first table would be the last four players of round 1.
        # (A player whose rating no table would take is left out by `_queue_round`: nothing to check.)
        first = seated2.get(players[-1])
        assert (
            first is None
            or sorted(by_game[first.game_id]) != sorted(players[-4:])
            or all(abs(ratings[p] - ratings[players[-1]]) <= WINDOW.base_window for p in players[-4:])
        )
        for game_id in by_game:
            await _match(sc_stub, game_id)

        assert len(seated2) >= 9  # at most one remainder of 1-2 players is left out

        async def rated_twice() -> bool:
            for player in seated2:
                history = await sc_stub.GetRatingHistory(
                    sc.GetRatingHistoryRequest(player_id=player, variant="kalooki")
                )
                if len(history.changes) != 2:
                    return False
            return True

        await _until(rated_twice, 60, "the second rating changes")

        # --- a contract tournament of 8 rotates its tables ----------------------------------------------
        await _contract_tournament(platform, mm_stub, sc_stub, kafka)

        # --- restart scoring and replay the game topic from the beginning: nothing changes ------------
        scores = KafkaEventLog(kafka, platform.topics["scores"], 3)
        games = KafkaEventLog(kafka, platform.topics["games"], 3)
        tables = KafkaEventLog(kafka, platform.topics["tables"], 3)

        async def settled() -> bool:  # every table created, every game event scored
            assert platform.engine.tables is not None
            formed = sum(r.event_type == "table_formed" for p in range(3) for r in tables.read_partition(p))
            logged = sum(1 for p in range(3) for _ in games.read_partition(p))  # markers take offsets too
            outbox = client.llen(f"{prefix}:scoring:outbox")
            return (
                platform.engine.tables.handled >= formed
                and platform.scoring.loops[0].records >= logged
                and outbox == 0
            )

        await _until(settled, 60, "the engine and scoring to catch up")
        before = _redis_dump(client, prefix)
        ends = [scores.end_offset(p) for p in range(3)]
        await platform.scoring.stop()
        replay_config = dataclasses.replace(platform.scoring_config, group=f"{prefix}.scoring-replay")
        platform.scoring = await start_scoring(replay_config)
        total = sum(1 for p in range(3) for _ in games.read_partition(p))

        async def replayed() -> bool:
            return platform.scoring.loops[0].records >= total

        await _until(replayed, 120, "the replay of the game topic")
        await asyncio.sleep(1.0)  # the tables consumer replays too
        assert [scores.end_offset(p) for p in range(3)] == ends
        assert _redis_dump(client, prefix) == before
        scores.close()
        games.close()
        tables.close()
    finally:
        for channel in channels:
            await channel.close()
        client.close()
        await platform.matchmaking.stop()
        await platform.scoring.stop()
        await platform.engine.stop()


def _game_events(games: KafkaEventLog, game_id: str) -> dict[str, ev.GameEvent]:
    """The game's rules events by case (a single-round game has one of each that matters here), read
    once its end shows (`read_until`)."""

    def read() -> dict[str, ev.GameEvent]:
        events: dict[str, ev.GameEvent] = {}
        for record in games.read_stream(game_id):
            envelope = ev.GameEvent.FromString(record.payload)
            events.setdefault(envelope.WhichOneof("event") or "", envelope)
        return events

    return read_until(read, lambda events: "game_ended" in events, 30)


def _mover(players: list[str], penalties: list[int], dealer: int) -> str:
    """Contract §3.14.3 D19 without a closer: the lowest round score moves, ties clockwise from the
    dealer's left (written out here from the spec, not taken from the rules engine)."""
    best = min(penalties)
    seat = next(
        s for s in ((dealer + i) % len(players) for i in range(1, len(players) + 1)) if penalties[s] == best
    )
    return players[seat]


async def _play_table(platform: Platform, table: Any) -> None:
    """Every seat of a tournament table played by its own bot, each with its own player token."""

    async def seat(index: int, player: str) -> None:
        async with GameClient(
            platform.engine.address, platform.people[player].token, retry_for_s=60
        ) as client:

            async def exists() -> bool:
                try:
                    await client.view(table.game_id, index)
                except RpcFailure as failure:
                    if failure.status != grpc.StatusCode.NOT_FOUND:
                        raise
                    return False
                return True

            await _until(exists, 60, f"game {table.game_id}")
            await BotPlayer(client, table.game_id, index, "greedy").play()

    await asyncio.gather(*(seat(i, p) for i, p in enumerate(table.player_ids)))


async def _contract_tournament(platform: Platform, mm_stub: Any, sc_stub: Any, kafka: str) -> None:
    """Eight players, two tournament rounds, bots at every seat. Round k's tables each play contract
    round k alone; the log says who closed each table (DealEnded.winner), and the second round's tables
    must show each closer moved on (contract §3.14.3 D19), the deal passed on (§3.14.4), and the
    standings must be the sum of the round penalties scoring published. (A third round proved the
    same rotation again, at the price of contract round 3's two runs.)"""
    operator = platform.operator.auth()
    players = list(platform.people)[len(PLAYERS) :]
    rounds = 2
    created = await mm_stub.CreateTournament(
        mm.CreateTournamentRequest(
            variant="contract", format=mm.TOURNAMENT_FORMAT_ROTATION, rounds=rounds, seed=b"e2e"
        ),
        metadata=operator,
    )
    tid = created.tournament_id
    for player in players:
        await mm_stub.RegisterForTournament(
            mm.RegisterForTournamentRequest(tournament_id=tid), metadata=platform.auth(player)
        )
    started = await mm_stub.StartTournament(mm.StartTournamentRequest(tournament_id=tid), metadata=operator)
    assert [len(t.player_ids) for t in started.tables] == [4, 4]  # contract §3.14.1: ceil(8/4) tables
    games = KafkaEventLog(kafka, platform.topics["games"], 3)
    penalties: dict[str, int] = dict.fromkeys(players, 0)
    dealers: list[int] = []
    try:
        for round_number in range(1, rounds + 1):

            async def tables_of(number: int = round_number) -> Any:
                reply = await mm_stub.GetTournament(
                    mm.GetTournamentRequest(tournament_id=tid), metadata=operator
                )
                current = [t for t in reply.tables if t.round == number]
                return current if len(current) == 2 else None

            tables = await _until(tables_of, 60, f"round {round_number}'s tables")
            await asyncio.wait_for(asyncio.gather(*(_play_table(platform, t) for t in tables)), 240)
            movers, seats, round_dealers = [], [], []
            for index, table in enumerate(tables):
                seated = list(table.player_ids)
                events = _game_events(games, table.game_id)
                started_event = events["game_started"].game_started
                # contract M2: the table plays contract `round_number` alone; §3.14.4: from round 2 the
                # deal passes to the seat left of the table's previous dealer
                assert started_event.options["first_round"].int_value == round_number
                assert started_event.options["last_round"].int_value == round_number
                if dealers:
                    assert started_event.dealer == (dealers[index] + 1) % len(seated)
                round_dealers.append(started_event.dealer)
                deal = events["deal_ended"].deal_ended
                closer = seated[deal.winner] if deal.HasField("winner") else None
                mover = closer or _mover(seated, list(deal.penalties), started_event.dealer)
                movers.append(mover)
                seats.append(seated.index(mover))
                match = await _match(sc_stub, table.game_id)  # scoring's result agrees with the log
                assert match.closer == (closer or "") and list(match.totals) == list(deal.penalties)
                for player, penalty in zip(seated, deal.penalties, strict=True):
                    penalties[player] += penalty
            dealers = round_dealers
            if round_number == rounds:
                break
            following = await _until(lambda n=round_number + 1: tables_of(n), 60, f"round {round_number + 1}")
            for index, table in enumerate(tables):
                # D19: the previous table's mover (the last table's, for table 1) takes the seat this
                # table's own mover left; everyone else keeps their seat
                expected = list(table.player_ids)
                expected[seats[index]] = movers[index - 1]
                assert list(following[index].player_ids) == expected, (round_number, index)

        async def finished() -> Any:
            reply = await mm_stub.GetTournament(mm.GetTournamentRequest(tournament_id=tid), metadata=operator)
            return reply if reply.finished else None

        final = await _until(finished, 60, "the tournament's end")
        assert final.round == rounds
        assert {s.player_id: s.points for s in final.standings} == penalties  # lowest first
        assert [s.points for s in final.standings] == sorted(penalties.values())

        async def standings() -> Any:
            reply = await sc_stub.GetStandings(sc.GetStandingsRequest(tournament_id=tid))
            return reply if sum(s.matches for s in reply.standings) == 4 * 2 * rounds else None

        scored = await _until(standings, 60, "scoring's standings")
        assert {s.player_id: s.points for s in scored.standings} == penalties
    finally:
        games.close()


@pytest.mark.integration
@pytest.mark.slow
def test_queue_to_leaderboard_on_kafka_and_redis(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str, identity: IdentityProcess
) -> None:
    asyncio.run(_scenario(kafka_bootstrap, redis_url, unique_prefix, identity))
