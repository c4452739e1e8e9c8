"""Matchmaking and scoring beside the engine in `meldstream run`, and the demo that goes through them.

Both always run. On the embedded store matchmaking publishes tables to a sqlite file next to the
engine's, scoring keeps its results in `SqliteKV` files next to both and publishes to its own sqlite
log, which matchmaking follows for ratings; on Kafka + Redis they use the topics and Redis. "Next to":
in directories beside `--data-dir` (`matchmaking`, `scoring`), or in the one directory a store URL
names (`--store sqlite:///DIR`, MELDSTREAM_STORE), as the services started apart would.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import grpc
from rummy.game.v1 import game_service_pb2 as gs
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.matchmaking.v1 import matchmaking_pb2_grpc as mm_grpc
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy.scoring.v1 import scoring_pb2_grpc as sc_grpc
from rummy_client.bots import BotPlayer
from rummy_client.client import GameClient, RpcFailure
from rummy_client.identity import IdentityClient, RenewingToken
from rummy_engine.config import EngineConfig
from rummy_identity.service import RunningIdentity
from rummy_matchmaking import config as matchmaking_config
from rummy_matchmaking.service import RunningMatchmaking, start_matchmaking
from rummy_rules.variants import PLAYABLE_VARIANTS
from rummy_scoring import config as scoring_config
from rummy_scoring.service import RunningScoring, start_scoring
from rummy_service.text import printable

DEMO_NAMES = ("ada", "ben", "cleo", "dana", "eli", "fay", "gus", "hal", "ivy", "jon", "kit", "lou")
TABLE = 3  # demo tables seat three
RESULT_WAIT_S = 30.0


def matchmaking_dir(config: EngineConfig) -> Path:
    return _beside(config, "matchmaking")


def scoring_dir(config: EngineConfig) -> Path:
    return _beside(config, "scoring")


def _beside(config: EngineConfig, service: str) -> Path:
    data = Path(config.data_dir)
    return data if config.store_setting else data.parent / service


def with_tables(config: EngineConfig) -> EngineConfig:
    """The engine configuration, following matchmaking's tables unless ENGINE_TABLES names them."""
    if config.tables:
        return config
    if config.embedded:
        return replace(config, tables=str(matchmaking_dir(config) / "tables.sqlite"))
    return replace(config, tables=matchmaking_config.MATCHMAKING_TOPIC)


@dataclass(slots=True)
class PlatformServices:
    matchmaking: RunningMatchmaking
    scoring: RunningScoring
    lines: list[str] = field(default_factory=list)

    async def stop(self) -> None:
        await self.matchmaking.stop()
        await self.scoring.stop()


async def start_services(config: EngineConfig) -> PlatformServices:
    """Start matchmaking and scoring for an engine configured by `with_tables`."""
    scoring = replace(
        scoring_config.load(),
        kafka=config.kafka,
        kafka_client=config.kafka_client,
        redis=config.redis,
        game_topic=config.topic,
        matchmaking_topic=config.tables,
        key_prefix=config.key_prefix,
        data_dir=str(scoring_dir(config)),
        game_file=str(Path(config.data_dir) / "events.sqlite"),
        tables_file=config.tables,
    )
    mm_config = replace(
        matchmaking_config.load(),
        kafka=config.kafka,
        kafka_client=config.kafka_client,
        topic=config.tables if not config.embedded else matchmaking_config.MATCHMAKING_TOPIC,
        data_dir=str(matchmaking_dir(config)),
        scoring_file=str(scoring_dir(config) / "scores.sqlite") if config.embedded else "",
        identity=config.identity,
    )
    matchmaking = await start_matchmaking(mm_config)  # first: it refuses a journal of another format
    try:
        services = PlatformServices(matchmaking, await start_scoring(scoring))
    except BaseException:
        await matchmaking.stop()
        raise
    services.lines.append(f"meldstream matchmaking listening on {services.matchmaking.address}")
    services.lines.append(f"meldstream scoring listening on {services.scoring.address}")
    return services


@dataclass(frozen=True, slots=True)
class DemoPlayer:
    """A demo account: its id (the player id), its name, and its access token kept fresh."""

    id: str
    name: str
    token: RenewingToken

    def auth(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token()}"),)


def demo_players(identity: RunningIdentity, count: int, password: str) -> list[DemoPlayer]:
    """The demo's accounts, signed up at the first run and signed in at the next ones (with the demo's
    password, kept in the identity store's directory)."""
    client = IdentityClient(identity.address, credentials=identity.config.tls.channel_credentials())
    players = []
    for i in range(count):
        name = f"demo-{DEMO_NAMES[i % len(DEMO_NAMES)]}{'' if i < len(DEMO_NAMES) else i}"
        try:
            session = client.sign_up(name, password, device="meldstream run --demo")
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.ALREADY_EXISTS:
                raise
            session = client.sign_in(name, password, device="meldstream run --demo")
        players.append(DemoPlayer(session.account.account_id, name, client.session_token(session)))
    return players


async def _seat(stub: Any, player: DemoPlayer, variant: str) -> mm.WatchTicketResponse:
    request = mm.EnqueueRequest(variant=variant, min_players=TABLE, max_players=TABLE)
    ticket = await stub.Enqueue(request, metadata=player.auth())
    last: mm.WatchTicketResponse | None = None
    watch = mm.WatchTicketRequest(ticket_id=ticket.ticket_id)
    async for reply in stub.WatchTicket(watch, metadata=player.auth()):
        last = reply
    assert last is not None and last.state == mm.TICKET_STATE_SEATED
    return last


async def _play_seat(
    engine: EngineConfig, player: DemoPlayer, seated: mm.WatchTicketResponse, pace_s: float
) -> gs.PlayerView:
    """Play the seat matchmaking gave `player`, with its token renewed as the game outlasts one."""
    seat = next(s for s in seated.seats if s.player_id == player.id)
    async with GameClient(
        engine.address,
        player.token,
        pace_s=pace_s,
        credentials=engine.tls.channel_credentials(),
        options=engine.tls.channel_options(),
    ) as client:
        for _ in range(200):  # the engine creates the game from TableFormed, asynchronously
            try:
                await client.view(seated.game_id, seat.seat)
                break
            except RpcFailure as failure:
                if failure.status != grpc.StatusCode.NOT_FOUND:
                    raise
                await asyncio.sleep(0.1)
        return await BotPlayer(client, seated.game_id, seat.seat).play()


async def _result(scores: Any, game_id: str) -> sc.GetMatchResultResponse | None:
    """The scored match, once scoring has followed the game's events to its end."""
    for _ in range(int(RESULT_WAIT_S / 0.1)):
        try:
            reply: sc.GetMatchResultResponse = await scores.GetMatchResult(
                sc.GetMatchResultRequest(game_id=game_id)
            )
            if reply.HasField("match"):
                return reply
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.NOT_FOUND:
                raise
        await asyncio.sleep(0.1)
    return None


def _ordinal(mu: float, sigma: float) -> float:
    return mu - 3 * sigma


async def _report(
    scores: Any, variant: str, game_id: str, final: gs.PlayerView, names: dict[str, str]
) -> list[str]:
    """What scoring made of a finished game: result, payouts, rating changes and the leaderboard."""
    reply = await _result(scores, game_id)
    if reply is None:
        return [f"  scoring: no result for {game_id} after {RESULT_WAIT_S:.0f} s"]
    match = reply.match
    shown = [names.get(p, p) for p in match.player_ids]
    totals = ", ".join(f"{p} {t}" for p, t in zip(shown, match.totals, strict=True))
    winners = ", ".join(names.get(p, p) for p in match.winners) or "-"
    lines = [
        f"game {game_id} over after {final.seq} events ({variant}, {len(reply.hands)} deals scored)",
        f"  result:   winner {winners}; totals {totals}",
    ]
    if match.payouts:
        pays = ", ".join(f"{p} {a}" for p, a in zip(shown, match.payouts, strict=True))
        lines.append(f"  payouts:  {pays}")
    changes = []
    for player, name in zip(match.player_ids, shown, strict=True):
        history = await scores.GetRatingHistory(sc.GetRatingHistoryRequest(player_id=player, variant=variant))
        if history.changes:
            last = history.changes[-1]
            before = _ordinal(last.mu_before, last.sigma_before)
            changes.append(f"{name} {before:+.2f} -> {last.ordinal:+.2f}")
    lines.append(f"  ratings:  {', '.join(changes)}")
    board = await scores.GetLeaderboard(sc.GetLeaderboardRequest(variant=variant, period="all", limit=5))
    top = "  ".join(f"{e.rank}. {names.get(e.player_id, e.player_id)} ({e.wins:.0f})" for e in board.entries)
    lines.append(f"  {variant} leaderboard (wins, all time): {top}")
    return lines


async def _table(
    engine: EngineConfig,
    scores: Any,
    variant: str,
    players: Sequence[DemoPlayer],
    seats: dict[str, Any],
    *,
    pace_s: float,
) -> None:
    game_id = seats[players[0].id].game_id
    views = await asyncio.gather(*(_play_seat(engine, p, seats[p.id], pace_s) for p in players))
    names = {p.id: p.name for p in players}
    for line in await _report(scores, variant, game_id, views[0], names):
        print(printable(line), flush=True)  # the leaderboard names whoever scoring rated


async def demo(
    services: PlatformServices,
    engine: EngineConfig,
    players: Sequence[DemoPlayer],
    *,
    pace_s: float = 0.0,
) -> None:
    """Bots that go the whole way, round after round: queue, get seated by rating, play, get scored.

    Each round every demo account queues for the round's variant (the variants in turn); matchmaking
    forms tables of three from the ratings scoring published; each result is printed as its game
    ends. Each bot waits `pace_s` before each move (`--pace`, so people can watch).
    """
    async with (
        engine.tls.channel(services.matchmaking.address) as mm_channel,
        engine.tls.channel(services.scoring.address) as sc_channel,
    ):
        queue: Any = mm_grpc.MatchmakingServiceStub(mm_channel)
        scores: Any = sc_grpc.ScoringServiceStub(sc_channel)
        for round_number in itertools.count(1):
            variant = PLAYABLE_VARIANTS[(round_number - 1) % len(PLAYABLE_VARIANTS)]
            ratings = []
            for player in players:
                rating = await queue.GetRating(
                    mm.GetRatingRequest(player_id=player.id, variant=variant), metadata=player.auth()
                )
                ratings.append(f"{player.name} {rating.rating:+.2f}")
            print(
                f"round {round_number}: {len(players)} tickets for {variant}: {', '.join(ratings)}",
                flush=True,
            )
            seated = await asyncio.gather(*(_seat(queue, p, variant) for p in players))
            seats = {p.id: seat for p, seat in zip(players, seated, strict=True)}
            by_game: dict[str, list[DemoPlayer]] = {}
            for player in players:
                by_game.setdefault(seats[player.id].game_id, []).append(player)
            for game_id, at_table in by_game.items():
                at_table.sort(key=lambda p: next(s.seat for s in seats[p.id].seats if s.player_id == p.id))
                print(f"  table {game_id}: {', '.join(p.name for p in at_table)}", flush=True)
            await asyncio.gather(
                *(
                    _table(engine, scores, variant, at_table, seats, pace_s=pace_s)
                    for at_table in by_game.values()
                )
            )
