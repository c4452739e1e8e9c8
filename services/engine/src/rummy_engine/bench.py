"""`make bench-engine`: action latency and throughput of the engine under many concurrent games.

The engine runs as its own process (as deployed) on real Kafka + Redis (found or started by
rummy_infra) or, with `--store embedded`, on the sqlite store. Greedy bots play `--games` tables at
once through the client SDK for `--seconds`; each SubmitAction is timed at the client (legal-action
queries are not counted). Beside it, in the same run and against the same server: a bare gRPC round
trip (`grpc.health.v1.Health/Check`, no store, no rules), sequentially and at the same concurrency.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from rummy.game.v1 import game_service_pb2 as gs
from rummy_client import GameClient
from rummy_client.bots import BotPlayer
from rummy_infra import provide_kafka, provide_redis
from rummy_infra.figures import latency
from rummy_infra.local import free_port
from rummy_infra.serving import wait_serving
from rummy_service.auth import DEV_SECRET, TokenIssuer

PLAYERS = ["p0", "p1", "p2"]


class TimedClient(GameClient):
    """A client that records the latency of every accepted action."""

    def __init__(self, target: str, token: str, latencies: list[float]) -> None:
        super().__init__(target, token)
        self._latencies = latencies

    async def submit(
        self, game_id: str, seat: int, action: gs.Action, command_id: str | None = None
    ) -> gs.SubmitActionResponse:
        began = time.perf_counter()
        response = await super().submit(game_id, seat, action, command_id)
        self._latencies.append(time.perf_counter() - began)
        return response


@contextlib.contextmanager
def _engine(store: str) -> Iterator[tuple[str, str]]:
    address = f"127.0.0.1:{free_port()}"
    env = {**os.environ, "ENGINE_ADDRESS": address, "ENGINE_TURN_TIMEOUT_MS": "0"}
    with contextlib.ExitStack() as stack:
        if store == "kafka":
            kafka = stack.enter_context(provide_kafka())
            redis = stack.enter_context(provide_redis())
            tag = f"bench-{os.getpid()}-{int(time.time())}"
            env |= {
                "KAFKA_BOOTSTRAP": kafka.address,
                "REDIS_URL": redis.address,
                "ENGINE_TOPIC": f"{tag}.rummy.game.events.v1",
                "ENGINE_KEY_PREFIX": f"{tag}:",
            }
            where = f"Kafka {kafka.address} ({kafka.origin}), Redis {redis.address} ({redis.origin})"
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
            yield address, where
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
    address: str, tables: int, seconds: float, variant: str, bot: str = "greedy"
) -> tuple[list[float], float, int]:
    tokens = TokenIssuer(os.environ.get("MELDSTREAM_TOKEN_SECRET", DEV_SECRET))
    latencies: list[float] = []
    finished = 0
    stop_at = time.perf_counter() + seconds

    async def table(n: int) -> None:
        nonlocal finished
        clients = [TimedClient(address, tokens.issue(p), latencies) for p in PLAYERS]
        try:
            while time.perf_counter() < stop_at:
                created = await clients[0].create_game(variant, PLAYERS)
                bots = [BotPlayer(c, created.game_id, seat, bot) for seat, c in enumerate(clients)]
                tasks = [asyncio.create_task(bot.play()) for bot in bots]
                done, _ = await asyncio.wait(tasks, timeout=max(0.0, stop_at - time.perf_counter()))
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                finished += len(done) == len(tasks)
        finally:
            for client in clients:
                await client.close()

    began = time.perf_counter()
    await asyncio.gather(*(table(n) for n in range(tables)))
    return latencies, time.perf_counter() - began, finished


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rummy_engine.bench", description=__doc__)
    parser.add_argument("--store", choices=("kafka", "embedded"), default="kafka")
    parser.add_argument("--games", type=int, default=24, help="tables playing at once")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--variant", default="kalooki")
    parser.add_argument(
        "--bot",
        choices=("greedy", "random"),
        default="greedy",
        help="random: cheap bots, more load on the engine",
    )
    args = parser.parse_args(argv)
    with _engine(args.store) as (address, where):
        print(
            f"engine: separate process at {address} on {where}; {os.cpu_count()} cores shared with the bots"
        )
        asyncio.run(_bare(address, 200, 1))  # warm up
        seq_lat, _ = asyncio.run(_bare(address, 2000, 1))
        par_lat, par_wall = asyncio.run(_bare(address, 3 * args.games * 100, 3 * args.games))
        one_lat, one_wall, _ = asyncio.run(_games(address, 1, min(args.seconds, 8.0), args.variant, args.bot))
        act_lat, act_wall, finished = asyncio.run(
            _games(address, args.games, args.seconds, args.variant, args.bot)
        )
    print(f"bare gRPC round trip (Health/Check), sequential:     {latency(seq_lat)}")
    print(
        f"bare gRPC round trip, {3 * args.games} concurrent callers:     {latency(par_lat)}  "
        f"{len(par_lat) / par_wall:,.0f} calls/s"
    )
    print(
        f"SubmitAction, 1 {args.variant} game alone (3 {args.bot} bots):            {latency(one_lat)}  "
        f"{len(one_lat) / one_wall:,.0f} actions/s"
    )
    print(
        f"SubmitAction, {args.games} concurrent {args.variant} games (3 {args.bot} bots each): "
        f"{latency(act_lat)}  "
        f"{len(act_lat) / act_wall:,.0f} actions/s  ({finished} games finished in {act_wall:.0f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
