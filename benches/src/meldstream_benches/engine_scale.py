"""`make bench-scale`: what a second engine process buys on this machine, and how long games stop
when an engine or a broker dies.

1. Throughput: the same load (a separate process: `--tables` tables of two seats moving at random
   among the legal actions their streams list; the Go client's load mode when `make go-client` built
   it, since a real deployment's clients run elsewhere and it costs a fraction of the CPU per action
   of the Python one, `engine_load`, which is the fallback) against 1, then 2 engine processes sharing
   a topic of `--partitions` partitions: actions/s, engine CPU ms per action (every engine process's
   /proc CPU over the window, divided by its actions), the load's own CPU ms per action, and the ratio.
2. Engine SIGKILL: with 2 engines and the load still playing, `--probes` games spread over the
   partitions; one engine is killed and each game of its partitions is sent a legal action every
   0.1 s: the time from the kill until the last of them is accepted.
3. Broker SIGKILL: 2 engines on a local 3-node KRaft cluster (replication 3, min ISR 2), the same
   probes over every partition, one node killed: the time until every game accepts an action again,
   then the node is restarted.

Tokens come from an identity service started for the run (`rummy_identity.testing`, a throwaway
embedded store): one person, whose token creates and plays every game of the load and of the probes,
seated with a house bot (`engine_load.seats`: a person's own table seats only them and house bots).
The loads are handed that token as it is, so the run's identity issues access tokens that outlive
the run (TOKEN_TTL_S); the engines verify them with its public keys.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import redis
from rummy_client import GameClient, RpcFailure
from rummy_engine.config import EngineConfig
from rummy_identity.testing import Player, running_identity
from rummy_infra import provide_kafka, provide_kafka_cluster, provide_redis
from rummy_infra.local import free_port, repo_root
from rummy_infra.serving import ServiceProcess
from rummy_store.ownership import OwnerDirectory
from rummy_store.partitioning import partition_for

from meldstream_benches.engine import UNLIMITED, cpu_s, progress
from meldstream_benches.engine_load import VARIANT, seats

TOKEN_TTL_S = 6 * 3600  # the loads' tokens are not renewed: they outlive a run
ROOT = repo_root()
GO_LOAD = ROOT / ".local" / "bin" / "meldstream-go"  # where clients/go/build.sh puts it
PROBE_EVERY_S = 0.1
RETRY_PROBE = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.FAILED_PRECONDITION}
)


class Engines:
    """Engine processes sharing one topic (a fresh one per `Engines`) through their consumer group."""

    def __init__(
        self, kafka: str, redis_url: str, partitions: int, logs: Path, identity: dict[str, str]
    ) -> None:
        tag = f"scale-{uuid.uuid4().hex[:8]}"
        self.topic = f"{tag}.rummy.game.events.v1"
        self.prefix = f"{tag}:"
        self.partitions = partitions
        self._redis = redis_url
        self._env = {
            **os.environ,
            "KAFKA_BOOTSTRAP": kafka,
            "REDIS_URL": redis_url,
            "ENGINE_TOPIC": self.topic,
            "ENGINE_KEY_PREFIX": self.prefix,
            "ENGINE_PARTITIONS": str(partitions),
            "ENGINE_TURN_TIMEOUT_MS": "0",
            "MELDSTREAM_DEV": "1",  # the development seed key: throwaway games
            "LOG_FORMAT": "json",  # `takeover` reads the survivor's claims from its log
            **UNLIMITED,
            **identity,  # where the engines get the public keys verifying the loads' tokens
        }
        self._logs = logs / tag
        self._logs.mkdir()
        self.running: list[ServiceProcess] = []

    def add(self) -> ServiceProcess:
        address = f"127.0.0.1:{free_port()}"
        engine = ServiceProcess(
            "rummy_engine", {**self._env, "ENGINE_ADDRESS": address}, address, self.log_of(address)
        )
        engine.start(120)
        self.running.append(engine)
        return engine

    def log_of(self, address: str) -> Path:
        return self._logs / f"engine-{address.rsplit(':', 1)[1]}.log"

    def owners(self) -> dict[int, str]:
        client = redis.Redis.from_url(self._redis)
        try:
            return OwnerDirectory(client, self.prefix, self.topic).read()
        finally:
            client.close()

    def settle(self, timeout_s: float = 60.0) -> None:
        """Wait until every partition is published by a running engine, each engine owning some."""
        addresses = {e.address for e in self.running}
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            owners = self.owners()
            if len(owners) == self.partitions and set(owners.values()) == addresses:
                return
            time.sleep(0.2)
        raise SystemExit(f"bench-scale: the partitions were not split between {sorted(addresses)}")

    def cpu_s(self) -> float:
        return sum(cpu_s(e.proc.pid) for e in self.running if e.proc is not None)

    def stop(self) -> None:
        for engine in self.running:
            engine.stop()


@dataclass(frozen=True)
class LoadGenerator:
    """Which program plays the load: the Go client's load mode (`make go-client`), which costs a
    fraction of the CPU per action the Python SDK does, or `meldstream_benches.engine_load`. Both speak the
    same protocol (`window`, then `done ACTIONS SECONDS`, then play on until SIGTERM), and both play
    as `player` (its current token, for both seats: see `engine_load.seats`)."""

    go: bool
    player: Player

    def command(self, target: str, tables: int, warmup_s: float, seconds: float) -> list[str]:
        sizes = {"tables": tables, "warmup": warmup_s, "seconds": seconds}
        players = ",".join(seats(self.player.id))
        token = self.player.token()
        tokens = f"{token},{token}"
        if self.go:
            command = [str(GO_LOAD), "load", "-address", target, "-variant", VARIANT, "-players", players]
            return [*command, "-tokens", tokens, *(f"-{name}={value}" for name, value in sizes.items())]
        command = [sys.executable, "-m", "meldstream_benches.engine_load", "--target", target]
        command += ["--players", players, "--tokens", tokens]
        return [*command, *(f"--{name}={value}" for name, value in sizes.items())]

    def __str__(self) -> str:
        if self.go:
            return f"the Go client's load mode ({GO_LOAD.relative_to(ROOT)} load)"
        return "the Python one (python -m meldstream_benches.engine_load, through the SDK)"


@contextlib.contextmanager
def load(
    generator: LoadGenerator, target: str, tables: int, warmup_s: float, seconds: float
) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        generator.command(target, tables, warmup_s, seconds), stdout=subprocess.PIPE, text=True
    )
    try:
        yield proc
    finally:
        proc.terminate()
        proc.wait(30)


def throughput(
    engines: Engines, generator: LoadGenerator, tables: int, warmup_s: float, seconds: float
) -> tuple[float, float, float]:
    """(actions/s, engine CPU ms per action, load generator CPU ms per action) over one window."""
    with load(generator, engines.running[0].address, tables, warmup_s, seconds) as proc:
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "window":
            raise SystemExit("bench-scale: the load generator stopped before its window")
        cpu, load_cpu = engines.cpu_s(), cpu_s(proc.pid)
        line = proc.stdout.readline().split()
        if not line or line[0] != "done":
            raise SystemExit("bench-scale: the load generator stopped during its window")
        cpu, load_cpu = engines.cpu_s() - cpu, cpu_s(proc.pid) - load_cpu
    actions, wall = int(line[1]), float(line[2])
    return actions / wall, cpu * 1000 / max(1, actions), load_cpu * 1000 / max(1, actions)


async def create_probes(
    target: str, player: Player, count: int, partitions: int, among: list[int]
) -> list[str]:
    """`count` games of `player` and a house bot, spread evenly over the partitions `among` (of
    `partitions`)."""
    client = GameClient(target, player.token)
    games = []
    try:
        for n in range(count):
            wanted = among[n * len(among) // count]
            game_id = next(
                g for i in range(100_000) if partition_for(g := f"probe-{n}-{i}", partitions) == wanted
            )
            await client.create_game(VARIANT, seats(player.id), game_id)
            games.append(game_id)
    finally:
        await client.close()
    return games


async def accepted_after(
    target: str, player: Player, games: list[str], since: float, timeout_s: float = 120.0
) -> float:
    """Send each game (of `create_probes`) one legal action every PROBE_EVERY_S until one is
    accepted; the seconds from `since` (monotonic) until the last game accepted one, infinity for a
    game still refusing after `timeout_s` (a figure too: the survivor did not recover in time)."""
    client = GameClient(target, player.token, retry_for_s=0, timeout_s=2)  # plays both seats
    deadline = since + timeout_s

    async def probe(game_id: str) -> float:
        while True:
            try:
                for seat in range(len(seats(player.id))):
                    legal = await client.legal_actions(game_id, seat)
                    if legal.actions:
                        await client.submit(game_id, seat, legal.actions[0])
                        return time.monotonic() - since
            except RpcFailure as failure:
                # FAILED_PRECONDITION: a move that timed out here was played after all; list again.
                if failure.status not in RETRY_PROBE:
                    raise SystemExit(f"bench-scale: game {game_id}: {failure}") from None
                if time.monotonic() > deadline:
                    progress(f"bench-scale: game {game_id} still refused after {timeout_s:g} s: {failure}")
                    return math.inf
            await asyncio.sleep(PROBE_EVERY_S)

    try:
        times = sorted(await asyncio.gather(*(probe(g) for g in games)))
    finally:
        await client.close()
    progress(
        f"bench-scale: probes accepted after {times[0]:.1f} s (first), {times[len(times) // 2]:.1f} s "
        f"(median), {times[-1]:.1f} s (last)"
    )
    return times[-1]


@dataclass(frozen=True)
class Takeover:
    """What the survivor's log says of a takeover, in seconds from the kill: when the group assigned
    it the dead engine's fence groups, when their claims ended, what each group's claim took (a new
    producer, its `init_transactions`, the read of its partitions' tails; the groups are claimed in
    parallel), and how long it spent resuming the open games of the claimed partitions."""

    assigned: float
    claimed: float
    steps: list[dict[str, float]]  # per fence group taken
    resumed: list[str]

    def __str__(self) -> str:
        text = f"assigned after {self.assigned:.1f} s, claims ended after {self.claimed:.1f} s"
        if self.steps:
            slowest = {step: max(s.get(step, 0.0) for s in self.steps) for step in self.steps[0]}
            text += f"; {len(self.steps)} fence groups taken, each at most " + ", ".join(
                f"{step} {took:.2f} s" for step, took in slowest.items()
            )
        return text + (f"; {'; '.join(self.resumed)}" if self.resumed else "")


def takeover(log_file: Path, topic: str, killed_at: float) -> Takeover:
    """`Takeover` of `topic` from the survivor's JSON log lines after `killed_at` (epoch seconds)."""
    assigned, claimed, steps, resumed = math.inf, math.inf, [], []
    for line in log_file.read_text(errors="replace").splitlines():
        try:
            entry = json.loads(line)
            at = dt.datetime.fromisoformat(entry["time"].replace("Z", "+00:00")).timestamp() - killed_at
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        message = entry.get("message", "")
        if at < 0 or not isinstance(message, str):
            continue
        if message == "fence groups assigned" and entry.get("to_claim"):
            assigned = min(assigned, at)
        elif message == "partitions claimed":
            claimed = at if math.isinf(claimed) else max(claimed, at)
        elif message.startswith(f"{topic}[") and message.endswith(" taken") and "seconds" in entry:
            steps.append({k: float(v) for k, v in entry["seconds"].items()})
        elif message.startswith("resumed "):
            resumed.append(message)
    return Takeover(assigned, claimed, steps, resumed)


def engine_kill(
    engines: Engines, generator: LoadGenerator, tables: int, probes: int
) -> tuple[float, float, int, int, Takeover]:
    """(seconds until the survivor published every partition of the killed engine, until each of its
    probed games accepted an action, its partitions, its probe games, the survivor's log of it)."""
    survivor, victim = engines.running
    moved = sorted(p for p, address in engines.owners().items() if address == victim.address)
    player = generator.player
    doomed = asyncio.run(create_probes(survivor.address, player, probes, engines.partitions, moved))

    async def claimed_after(since: float) -> float:
        while any(engines.owners().get(p) != survivor.address for p in moved):
            await asyncio.sleep(PROBE_EVERY_S)
        return time.monotonic() - since

    async def recovery(since: float) -> tuple[float, float]:
        claimed, took = await asyncio.gather(
            claimed_after(since), accepted_after(survivor.address, player, doomed, since)
        )
        return claimed, took

    with load(generator, survivor.address, tables, 1.0, 3600):
        time.sleep(5)  # playing
        victim.kill()
        killed_at, killed_wall = time.monotonic(), time.time()
        progress(f"bench-scale: engine killed at {time.strftime('%H:%M:%S')}")
        engines.running.remove(victim)
        claimed, took = asyncio.run(recovery(killed_at))
        time.sleep(1)  # the survivor's last log lines
    survivor_log = takeover(engines.log_of(survivor.address), engines.topic, killed_wall)
    return claimed, took, len(moved), len(doomed), survivor_log


def broker_kill(
    redis_url: str, partitions: int, probes: int, logs: Path, *, identity: dict[str, str], player: Player
) -> tuple[float, float]:
    """(seconds until every game accepts an action after a node is killed, the same after its restart)."""
    with provide_kafka_cluster(3) as cluster:
        engines = Engines(cluster.bootstrap, redis_url, partitions, logs, identity)
        try:
            engines.add()
            engines.add()
            engines.settle()
            target = engines.running[0].address
            games = asyncio.run(create_probes(target, player, probes, partitions, list(range(partitions))))
            cluster.kill(0)
            killed_at = time.monotonic()
            after_kill = asyncio.run(accepted_after(target, player, games, killed_at))
            progress("bench-scale: restarting the killed broker")
            cluster.restart(0)
            restarted_at = time.monotonic()
            after_restart = asyncio.run(accepted_after(target, player, games, restarted_at))
        finally:
            engines.stop()
    return after_kill, after_restart


def throughput_row(
    engines: Engines, generator: LoadGenerator, args: argparse.Namespace, say: Callable[[str], None]
) -> tuple[float, float, float]:
    count = len(engines.running)
    progress(f"bench-scale: {args.tables} tables against {count} engine(s), {args.seconds:g} s")
    figures = throughput(engines, generator, args.tables, args.warmup, args.seconds)
    rate, cpu, load_cpu = figures
    say(
        f"{count} engine process{'es' if count > 1 else ''}: {rate:7,.0f} actions/s   "
        f"engine CPU {cpu:.2f} ms/action   load generator CPU {load_cpu:.2f} ms/action"
    )
    return figures


def failover_rows(
    engines: Engines, generator: LoadGenerator, args: argparse.Namespace, say: Callable[[str], None]
) -> None:
    progress("bench-scale: SIGKILL of one of the two engines under load")
    claimed, took, moved, doomed, log = engine_kill(engines, generator, args.tables, args.probes)
    say(
        f"engine SIGKILL: its {moved} partitions claimed by the other after {claimed:.1f} s; "
        f"every game of them ({doomed} probed) accepts an action again {_seconds(took)} (target < 8 s)"
    )
    say(f"  the survivor's log: {log}")


def _seconds(value: float) -> str:
    return "never within the probes' 120 s" if math.isinf(value) else f"after {value:.1f} s"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m meldstream_benches.engine_scale", description=__doc__)
    parser.add_argument("--tables", type=int, default=48, help="tables of the load (2 seats each)")
    parser.add_argument("--seconds", type=float, default=20.0, help="the measured window")
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--partitions", type=int, default=EngineConfig().partitions)
    parser.add_argument("--probes", type=int, default=24, help="games probed after a kill")
    parser.add_argument("--no-broker-kill", action="store_true", help="skip the 3-node cluster part")
    parser.add_argument(
        "--failover-only",
        action="store_true",
        help="only the engine SIGKILL part (2 engines, no throughput windows, no broker kill)",
    )
    parser.add_argument(
        "--load",
        choices=("go", "python"),
        help="the load generator (default: the Go client's load mode when it is built, `make go-client`)",
    )
    parser.add_argument("--logs", help="keep the engines' logs in this directory (default: a temporary one)")
    args = parser.parse_args(argv)
    if args.load == "go" and not GO_LOAD.exists():
        parser.error(f"--load go: {GO_LOAD} is not built (make go-client)")
    go = args.load == "go" or (args.load is None and GO_LOAD.exists())

    def say(row: str) -> None:
        print(row, flush=True)

    with (
        running_identity({"IDENTITY_ACCESS_TTL_S": str(TOKEN_TTL_S)}) as identity,
        provide_kafka() as kafka,
        provide_redis() as store,
        tempfile.TemporaryDirectory(prefix="meldstream-bench-scale-") as scratch,
    ):
        generator = LoadGenerator(go, identity.player("bench-scale"))
        verifying = identity.service_env()
        logs = Path(args.logs or scratch)
        logs.mkdir(parents=True, exist_ok=True)
        print(
            f"Kafka {kafka.address} ({kafka.origin}), Redis {store.address} ({store.origin}); "
            f"{os.cpu_count()} cores shared by the engines, the load process, Kafka and Redis"
        )
        unbuilt = (
            ""
            if generator.go or args.load
            else f" ({GO_LOAD.relative_to(ROOT)} is not built: make go-client)"
        )
        print(f"load generator: {generator}{unbuilt}")
        figures = {}
        for count in (2,) if args.failover_only else (1, 2):
            engines = Engines(kafka.address, store.address, args.partitions, logs, verifying)
            try:
                for _ in range(count):
                    engines.add()
                engines.settle()
                if not args.failover_only:
                    figures[count] = throughput_row(engines, generator, args, say)
                if count == 2:
                    if not args.failover_only:
                        say(f"ratio, 2 engines / 1: {figures[2][0] / figures[1][0]:.2f}x (target 1.4x)")
                    failover_rows(engines, generator, args, say)
            finally:
                engines.stop()
        if not args.no_broker_kill and not args.failover_only:
            progress("bench-scale: broker SIGKILL on a 3-node cluster")
            after_kill, after_restart = broker_kill(
                store.address, args.partitions, args.probes, logs, identity=verifying, player=generator.player
            )
            say(
                f"broker SIGKILL (1 of 3 nodes, replication 3, min ISR 2): every game accepts an action "
                f"again {_seconds(after_kill)}; after its restart, {_seconds(after_restart)}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
