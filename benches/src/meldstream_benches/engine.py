"""`make bench-engine`: the engine's cost per action, latency and throughput under many concurrent games.

The engine runs as its own process (as deployed) on real Kafka + Redis (found or started by
rummy_infra) or, with `--store embedded`, on the sqlite store. Greedy bots play N tables at once for
each N of `--games` through the client SDK for `--seconds`; each SubmitAction is timed at the client
(legal-action queries are not counted), and the engine process's CPU seconds (from /proc) are divided
by the actions (stream fan-out to every seat included). Beside it, in the same run: the floor, a bare
gRPC round trip (`grpc.health.v1.Health/Check`: no store, no rules), a bare kafka-python acks=all
produce and a bare transaction of one record (begin, produce, commit, as the engine's appends); and the
start cost (CreateGame plus the first action) with `--start-records` records already in the topic.

With `--rate R` the load is open-loop: actions are sent at R a second in all (each bot waits for its
slot), not as fast as bots answer, so latency is the engine's and not the queue bots build at
saturation; it is printed beside the floor of the same run (the p99 of a bare gRPC round trip plus the
p99 of a bare transaction). The load driver (this process: the bots) shares the box with the engine,
so its CPU per action is printed beside the engine's.

With `--watchers N`, a last phase opens N WatchGame streams at once on `--watch-games` games that
random bots play (the spectators' channels a hundred streams each, one spectator account), reads
them all for `--seconds`, and prints how each stream ended (its first view, then the game's end or
still open; or the status and reason the server ended it with, before or after its first view, and
whether a RESOURCE_EXHAUSTED came with a retry delay) and the time to the first view: issue 24's
"streams that stay up", where none should end CANCELLED.

Tokens come from an identity service started for the run (`rummy_identity.testing`, on a throwaway
embedded store); the engine verifies them with its public keys. Every table seats the same three
people, each playing with their own token; an operator creates the games (a person's own table seats
only them and the house bots). The engine's per-account rate limits are lifted (UNLIMITED): three
accounts play every table here, where a deployment's load comes from many.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from rummy.game.v1 import game_service_pb2 as gs
from rummy.game.v1 import game_service_pb2_grpc as gs_grpc
from rummy_client import GameClient, RpcFailure
from rummy_client.bots import BotPlayer
from rummy_identity.testing import IdentityProcess, Player, running_identity
from rummy_infra import provide_kafka, provide_redis
from rummy_infra.figures import latency
from rummy_infra.local import free_port
from rummy_infra.serving import wait_serving
from rummy_service.rate_limits import ACCOUNT_VARIABLE, MOVES_VARIABLE, RETRY_TRAILER
from rummy_store import NewEvent
from rummy_store.kafka_records import headers

PLAYERS = ["bench-p0", "bench-p1", "bench-p2"]  # account names at the run's identity service
UNLIMITED = {ACCOUNT_VARIABLE: "1000000/second", MOVES_VARIABLE: "1000000/second"}
"""The engine environment lifting the per-account limits: a bench's few accounts play every table."""


class Pacer:
    """Send times `1 / rate` apart for every action of the run: open-loop load.

    A slot is never handed out in the past: when every bot was busy (the engine saturated, or the
    bots' own CPU), the rate achieved falls below the one asked, and the bench prints both.
    """

    def __init__(self, rate: float) -> None:
        self._interval = 1 / rate
        self._next = time.perf_counter()

    async def turn(self) -> None:
        now = time.perf_counter()
        slot = max(self._next, now)
        self._next = slot + self._interval
        await asyncio.sleep(slot - now)


class TimedClient(GameClient):
    """A client that records the latency of every accepted action (sent at its `pacer`'s slot)."""

    def __init__(
        self, target: str, token: Callable[[], str], latencies: list[float], pacer: Pacer | None = None
    ) -> None:
        super().__init__(target, token)
        self._latencies = latencies
        self._pacer = pacer

    async def submit(
        self,
        game_id: str,
        seat: int,
        action: gs.Action,
        command_id: str | None = None,
        *,
        include_view: bool = False,
    ) -> gs.SubmitActionResponse:
        if self._pacer is not None:
            await self._pacer.turn()
        began = time.perf_counter()
        response = await super().submit(game_id, seat, action, command_id, include_view=include_view)
        self._latencies.append(time.perf_counter() - began)
        return response


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True, slots=True)
class Engine:
    address: str
    where: str
    pid: int
    env: dict[str, str]


KAFKA_STORES: Final = {"kafka": "kafka-python", "kafka+rdkafka": "rdkafka"}  # --store -> KAFKA_CLIENT


@contextlib.contextmanager
def _engine(store: str, identity: IdentityProcess) -> Iterator[Engine]:
    address = f"127.0.0.1:{free_port()}"
    env = {
        **os.environ,
        "ENGINE_ADDRESS": address,
        "ENGINE_TURN_TIMEOUT_MS": "0",
        # Deal at once: the start cost is CreateGame plus the first action, and no seat here sends a
        # seed, so the seed window would only add its wait (and refuse the first action until it ends).
        "ENGINE_SEED_WINDOW_MS": "0",
        **UNLIMITED,
        **identity.service_env(),
    }
    with contextlib.ExitStack() as stack:
        if store in KAFKA_STORES:
            kafka = stack.enter_context(provide_kafka())
            redis = stack.enter_context(provide_redis())
            tag = f"bench-{os.getpid()}-{int(time.time())}"
            env |= {
                "KAFKA_BOOTSTRAP": kafka.address,
                "REDIS_URL": redis.address,
                "ENGINE_TOPIC": f"{tag}.rummy.game.events.v1",
                "ENGINE_KEY_PREFIX": f"{tag}:",
                "KAFKA_CLIENT": KAFKA_STORES[store],
            }
            where = f"Kafka {kafka.address} ({kafka.origin}), Redis {redis.address} ({redis.origin})"
            where += f", client {KAFKA_STORES[store]}"
        else:
            data = stack.enter_context(tempfile.TemporaryDirectory(prefix="meldstream-bench-"))
            env["ENGINE_DATA_DIR"] = data
            where = f"embedded sqlite store in {data}"
        proc = subprocess.Popen([sys.executable, "-m", "rummy_engine"], env=env, stdout=subprocess.DEVNULL)
        try:
            try:
                wait_serving(address, proc)
            except RuntimeError as failure:
                raise SystemExit(f"bench-engine: the engine did not start: {failure}") from None
            yield Engine(address, where, proc.pid, env)
        finally:
            proc.terminate()
            proc.wait(30)


async def _bare(address: str, calls: int, concurrency: int) -> tuple[list[float], float]:
    latencies: list[float] = []
    async with grpc.aio.insecure_channel(address) as channel:
        health: Any = health_pb2_grpc.HealthStub(channel)
        request = health_pb2.HealthCheckRequest()

        async def worker(count: int) -> None:
            for _ in range(count):
                began = time.perf_counter()
                await health.Check(request)
                latencies.append(time.perf_counter() - began)

        began = time.perf_counter()
        await asyncio.gather(*(worker(calls // concurrency) for _ in range(concurrency)))
        return latencies, time.perf_counter() - began


async def _games(
    address: str,
    tables: int,
    seconds: float,
    variant: str,
    bot: str = "greedy",
    *,
    players: list[Player],
    ops: Player,
    rate: float = 0.0,
    warmup: float = 0.0,
    at_window: Callable[[], None] = lambda: None,
) -> tuple[list[float], float, int, Counter[str]]:
    """Latencies, wall time, games finished, and how bots' streams failed (by status), over `seconds`
    after `warmup` seconds not counted (the opening burst of CreateGame and streams); `at_window` is
    called as the counted window opens."""
    ids = [p.id for p in players]
    latencies: list[float] = []
    finished = 0
    failed: Counter[str] = Counter()
    stop_at = time.perf_counter() + warmup + seconds
    window = [time.perf_counter()]

    def open_window() -> None:
        latencies.clear()
        window[0] = time.perf_counter()
        at_window()

    asyncio.get_running_loop().call_later(warmup, open_window)
    operator = GameClient(address, ops.token)  # seats the players at every table
    pacer = Pacer(rate) if rate else None

    async def table(n: int) -> None:
        nonlocal finished
        clients = [TimedClient(address, p.token, latencies, pacer) for p in players]
        try:
            while time.perf_counter() < stop_at:
                created = await operator.create_game(variant, ids)
                bots = [BotPlayer(c, created.game_id, seat, bot) for seat, c in enumerate(clients)]
                tasks = [asyncio.create_task(bot.play()) for bot in bots]
                done, _ = await asyncio.wait(tasks, timeout=max(0.0, stop_at - time.perf_counter()))
                for task in tasks:
                    task.cancel()
                for outcome in await asyncio.gather(*tasks, return_exceptions=True):
                    if isinstance(outcome, RpcFailure):
                        failed[outcome.status.name] += 1
                finished += len(done) == len(tasks)
        finally:
            for client in clients:
                await client.close()

    try:
        await asyncio.gather(*(table(n) for n in range(tables)))
    finally:
        await operator.close()
    return latencies, time.perf_counter() - window[0], finished, failed


WATCHERS_PER_CHANNEL: Final = 100  # spectators sharing one connection, as behind one web gateway


async def _watchers(
    address: str,
    count: int,
    games: int,
    seconds: float,
    *,
    players: list[Player],
    ops: Player,
    watcher: Player,
) -> tuple[Counter[str], list[float]]:
    """`count` spectators opening WatchGame at once on `games` games played by random bots: how each
    stream ended, and each first view's wait from the call."""
    operator = GameClient(address, ops.token)
    clients = [GameClient(address, p.token) for p in players]
    ended: Counter[str] = Counter()  # and "messages": every update the spectators read
    waits: list[float] = []
    try:
        ids = [(await operator.create_game("rummy40", [p.id for p in players])).game_id for _ in range(games)]
        bots = [
            asyncio.create_task(BotPlayer(client, game_id, seat, "random").play())
            for game_id in ids
            for seat, client in enumerate(clients)
        ]
        metadata = (("authorization", f"Bearer {watcher.token()}"),)
        channels = [grpc.aio.insecure_channel(address) for _ in range(0, count, WATCHERS_PER_CHANNEL)]

        async def watch(n: int) -> None:
            stub: Any = gs_grpc.GameServiceStub(channels[n // WATCHERS_PER_CHANNEL])
            began = time.perf_counter()
            call = stub.WatchGame(gs.WatchGameRequest(game_id=ids[n % games]), metadata=metadata)
            viewed = False
            try:
                async for message in call:
                    ended["messages"] += 1
                    if not viewed:
                        waits.append(time.perf_counter() - began)
                        viewed = True
                    if message.update.view.phase == gs.PHASE_GAME_OVER:
                        ended["view, then the game's end"] += 1
                        return
                ended["view, then the server ended it OK" if viewed else "ended OK with no view"] += 1
            except asyncio.CancelledError:
                ended["view, open at the end" if viewed else "no view, open at the end"] += 1
                call.cancel()
            except grpc.aio.AioRpcError as error:
                retry = dict(error.trailing_metadata() or ()).get(RETRY_TRAILER)
                reason = (error.details() or "")[:20]
                ended[
                    f"{'after' if viewed else 'before'} a view: {error.code().name} {reason!r}"
                    + (f", retry in {retry} ms" if retry else "")
                ] += 1

        watchers = [asyncio.create_task(watch(n)) for n in range(count)]
        await asyncio.wait(watchers, timeout=seconds)
        for task in (*watchers, *bots):
            task.cancel()
        await asyncio.gather(*watchers, *bots, return_exceptions=True)
        for channel in channels:
            await channel.close()
    finally:
        for client in (operator, *clients):
            await client.close()
    return ended, waits


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _produce_floor(bootstrap: str, topic: str, count: int) -> list[float]:
    """A bare kafka-python acks=all produce, one record at a time: the floor under an append."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=0)
    try:
        producer.send(topic, key=b"floor", value=bytes(200)).get(timeout=30)
        samples = []
        for i in range(count):
            began = time.perf_counter()
            producer.send(topic, key=f"floor-{i}".encode(), value=bytes(200)).get(timeout=30)
            samples.append(time.perf_counter() - began)
        return samples
    finally:
        producer.close()


def _transaction_floor(bootstrap: str, topic: str, count: int) -> list[float]:
    """A bare kafka-python transaction of one acks=all record (begin, produce, commit): the floor under
    an append, which the engine writes so (one transaction per group commit)."""
    producer = KafkaProducer(
        bootstrap_servers=bootstrap,
        transactional_id=f"{topic}.floor",
        acks="all",
        linger_ms=0,
        retry_backoff_ms=5,  # as the engine's producers: the next transaction starts sooner
        metrics_enabled=False,
    )
    try:
        producer.init_transactions()
        samples = []
        for i in range(count + 1):
            began = time.perf_counter()
            producer.begin_transaction()
            producer.send(topic, key=f"floor-{i}".encode(), value=bytes(200))
            producer.commit_transaction()
            samples.append(time.perf_counter() - began)
        return samples[1:]  # the first adds the partition to the transaction's broker state
    finally:
        producer.close()


def _fill(bootstrap: str, topic: str, upto: int) -> None:
    """Write finished one-record "games" (in the log's format) until the topic holds `upto` records."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5, batch_size=256 * 1024)
    admin_consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        parts = [TopicPartition(topic, p) for p in admin_consumer.partitions_for_topic(topic) or ()]
        have = sum(admin_consumer.end_offsets(parts).values())
        event = NewEvent("game_ended", bytes(200), 2)
        futures = [
            producer.send(
                topic, key=f"fill-{have}-{n}".encode(), value=event.payload, headers=headers(event, 1, "fill")
            )
            for n in range(max(0, upto - have))
        ]
        producer.flush(timeout=300)
        for future in futures[-1:]:
            future.get(timeout=30)
    finally:
        producer.close()
        admin_consumer.close()


async def _starts(address: str, players: list[Player], ops: Player, count: int) -> list[float]:
    """CreateGame (by the operator) plus the first action of `count` new games, one after another."""
    operator = GameClient(address, ops.token)
    clients = [GameClient(address, p.token) for p in players]
    samples = []
    try:
        for _ in range(count):
            began = time.perf_counter()
            created = await operator.create_game("kalooki", [p.id for p in players])
            seat = created.view.turn
            await clients[seat].submit(created.game_id, seat, gs.Action(draw_from_stock=gs.DrawFromStock()))
            samples.append(time.perf_counter() - began)
    finally:
        for client in (operator, *clients):
            await client.close()
    return samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m meldstream_benches.engine", description=__doc__)
    parser.add_argument(
        "--store",
        choices=(*KAFKA_STORES, "embedded"),
        default="kafka",
        help="kafka: the engine on kafka-python, kafka+rdkafka: on confluent-kafka (librdkafka)",
    )
    parser.add_argument(
        "--games", type=_ints, default=[24, 100], help="tables playing at once, one phase each (24,100,500)"
    )
    parser.add_argument(
        "--start-records",
        type=_ints,
        default=[1_000, 100_000],
        help="topic sizes to measure the start cost at",
    )
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument(
        "--warmup",
        type=float,
        default=0.0,
        help="seconds played before each phase's counted --seconds (the opening burst not counted)",
    )
    parser.add_argument(
        "--rate",
        type=float,
        default=0.0,
        help="open loop: send actions at this rate (per second, all games together); 0: as fast as bots",
    )
    parser.add_argument("--watchers", type=int, default=0, help="spectators opening WatchGame at once")
    parser.add_argument("--watch-games", type=int, default=4, help="the games the --watchers watch")
    parser.add_argument("--variant", default="kalooki")
    parser.add_argument(
        "--bot",
        choices=("greedy", "random"),
        default="greedy",
        help="random: cheap bots, more load on the engine",
    )
    args = parser.parse_args(argv)
    if args.watchers < 0 or args.watch_games < 1:
        parser.error("--watchers is 0 or more, and --watch-games at least 1")
    rows: list[str] = []
    with running_identity() as identity, _engine(args.store, identity) as engine:
        players, ops = [identity.player(name) for name in PLAYERS], identity.operator()
        address = engine.address
        cores = os.cpu_count()
        print(f"engine: separate process at {address} on {engine.where}; {cores} cores shared with the bots")
        asyncio.run(_bare(address, 200, 1))  # warm up
        cpu = cpu_s(engine.pid)
        seq_lat, _ = asyncio.run(_bare(address, 2000, 1))
        cpu_ms = (cpu_s(engine.pid) - cpu) * 1000 / len(seq_lat)
        rows.append(
            f"floor: bare gRPC round trip (Health/Check), sequential     {latency(seq_lat)}  "
            f"engine CPU {cpu_ms:.2f} ms/call"
        )
        floor_s = p99(seq_lat)
        if "KAFKA_BOOTSTRAP" in engine.env:
            bootstrap, topic = engine.env["KAFKA_BOOTSTRAP"], engine.env["ENGINE_TOPIC"] + ".floor"
            floor = _produce_floor(bootstrap, topic, 500)
            rows.append(f"floor: bare kafka-python produce, acks=all, sequential   {latency(floor)}")
            transactions = _transaction_floor(bootstrap, topic, 300)
            rows.append(f"floor: bare kafka-python transaction of 1 record, acks=all {latency(transactions)}")
            floor_s += p99(transactions)
            rows.append(f"floor: p99 gRPC round trip + p99 transaction = {floor_s * 1000:.3f} ms")
        at: dict[str, float] = {}  # CPU seconds of the engine and of this process as a window opens

        def mark() -> None:
            at.update(engine=cpu_s(engine.pid), driver=cpu_s(os.getpid()))

        for games in args.games:
            how = f"open loop at {args.rate:g} actions/s" if args.rate else "closed loop"
            progress(f"bench-engine: {games} concurrent {args.variant} games for {args.seconds:g} s, {how}")
            act_lat, act_wall, finished, failed = asyncio.run(
                _games(
                    address,
                    games,
                    args.seconds,
                    args.variant,
                    args.bot,
                    players=players,
                    ops=ops,
                    rate=args.rate,
                    warmup=args.warmup,
                    at_window=mark,
                )
            )
            actions = max(1, len(act_lat))
            cpu_ms = (cpu_s(engine.pid) - at["engine"]) * 1000 / actions
            driver_ms = (cpu_s(os.getpid()) - at["driver"]) * 1000 / actions
            rows.append(
                f"SubmitAction, {games:>3} games (3 {args.bot} bots each), {how}: {latency(act_lat)}  "
                f"p99/floor x{p99(act_lat) / floor_s:.1f}  {len(act_lat) / act_wall:,.0f} actions/s  "
                f"engine CPU {cpu_ms:.2f} ms/action  driver CPU {driver_ms:.2f} ms/action  "
                f"({finished} games finished; streams failed: {dict(failed) or 'none'})"
            )
        if args.watchers:
            progress(
                f"bench-engine: {args.watchers} spectators on {args.watch_games} games, {args.seconds:g} s"
            )
            spectator = identity.player("bench-watcher")
            mark()
            began = time.perf_counter()
            ended, waits = asyncio.run(
                _watchers(
                    address,
                    args.watchers,
                    args.watch_games,
                    args.seconds,
                    players=players,
                    ops=ops,
                    watcher=spectator,
                )
            )
            wall, messages = time.perf_counter() - began, ended.pop("messages", 0)
            rows.append(
                f"WatchGame, {args.watchers} spectators at once on {args.watch_games} games: first view "
                f"{latency(waits) if waits else 'never'}; {messages / wall:,.0f} updates/s read; CPU over "
                f"{wall:.0f} s: engine {cpu_s(engine.pid) - at['engine']:.1f} s, driver "
                f"{cpu_s(os.getpid()) - at['driver']:.1f} s; streams: "
                + "; ".join(f"{how}: {n}" for how, n in sorted(ended.items()))
            )
        if "KAFKA_BOOTSTRAP" in engine.env:
            for records in args.start_records:
                progress(f"bench-engine: filling the topic to {records:,} records")
                _fill(engine.env["KAFKA_BOOTSTRAP"], engine.env["ENGINE_TOPIC"], records)
                starts = asyncio.run(_starts(address, players, ops, 20))
                rows.append(f"start cost (CreateGame + 1st action), {records:>7,} records: {latency(starts)}")
    for row in rows:
        print(row)
    return 0


def p99(samples_s: list[float]) -> float:
    return statistics.quantiles(samples_s, n=100, method="inclusive")[98] if len(samples_s) > 1 else 0.0


def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",")]


if __name__ == "__main__":
    sys.exit(main())
