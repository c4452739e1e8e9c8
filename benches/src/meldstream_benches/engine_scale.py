"""`make bench-scale`: what more engine processes cost and buy on this machine, how long games stop
when an engine joins, leaves or dies, or a broker dies.

1. Throughput and cost (the cost model of docs/benchmarks.md): the same load (a separate process:
   `--tables` tables of two seats moving at random among the legal actions their streams list; the
   Go client's load mode when `make go-client` built it, since a real deployment's clients run
   elsewhere and it costs a fraction of the CPU per action of the Python one, `engine_load`, which is
   the fallback) against each count of `--engines` engine processes (1,2 by default; 1,2,4 for the
   model) sharing a topic of `--partitions` partitions, `--reps` times, the counts interleaved (one
   pool of engines grown and shrunk: 1,2,4 then 4,2,1 ...), each count's median printed at the end.
   Per window: actions/s; every engine's /proc CPU divided by the actions it accepted (its
   `rummy_engine_actions_accepted` metric, read at its ENGINE_METRICS_ADDRESS), which is flat from 1
   to N engines if the work per action does not grow with the engines; all engines' CPU per action;
   the load's, the Kafka broker's and Redis's CPU per action (their processes found by the port they
   listen on, when on this machine); the Kafka transactions per action and appends per transaction
   (the engines' group commit metrics).
2. Join and leave: with `--rebalance-tables` tables of the load playing and `--probes` games spread
   over every partition, each sent a legal action every 0.1 s, one engine joins (1 -> 2), then
   leaves (SIGTERM, 2 -> 1): the time until the owners' directory shows the new split, until every
   probed game accepted a move after that, and the longest any probed game went without a move.
3. Engine SIGKILL: with 2 engines and the load still playing, `--probes` games spread over the
   partitions; one engine is killed and each game of its partitions is sent a legal action every
   0.1 s: the time from the kill until the last of them is accepted.
4. Broker SIGKILL: 2 engines on a local 3-node KRaft cluster (replication 3, min ISR 2), the same
   probes over every partition, one node killed: the time until every game accepts an action again,
   then the node is restarted.

`--parts` chooses among them (all by default; `--failover-only` is `--parts failover`).

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
import functools
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterable, Iterator
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
COUNTERS = (  # of each engine's /metrics: actions accepted, appends, group commit batches (transactions)
    "rummy_engine_actions_accepted_total",
    "rummy_engine_append_batch_size_sum",
    "rummy_engine_append_batch_size_count",
)
IDLE_S = 3.0  # before each window, no load: the engines' and Kafka's fixed CPU
QUIET_S = 6.0  # probed before a join or a leave: how long a game goes without a move with no change
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
        self.metrics: dict[str, str] = {}  # engine address -> its /metrics URL

    def add(self) -> ServiceProcess:
        address = f"127.0.0.1:{free_port()}"
        metrics = f"127.0.0.1:{free_port()}"
        env = {**self._env, "ENGINE_ADDRESS": address, "ENGINE_METRICS_ADDRESS": metrics}
        engine = ServiceProcess("rummy_engine", env, address, self.log_of(address))
        engine.start(120)
        self.running.append(engine)
        self.metrics[address] = f"http://{metrics}/metrics"
        return engine

    def resize(self, count: int) -> None:
        """Start or stop (SIGTERM, the newest first) engines until `count` run, then `settle`."""
        while len(self.running) < count:
            self.add()
        while len(self.running) > count:
            self.running.pop().stop()
        self.settle()

    def counters(self) -> list[list[float]]:
        """Each running engine's COUNTERS so far."""
        return [_counters(self.metrics[e.address]) for e in self.running]

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


def _counters(url: str) -> list[float]:
    with urllib.request.urlopen(url, timeout=10) as reply:
        text = reply.read().decode()
    values = dict(line.split()[:2] for line in text.splitlines() if line.startswith(COUNTERS))
    if missing := [name for name in COUNTERS if name not in values]:
        raise SystemExit(f"bench-scale: {url} has no {', '.join(missing)}")
    return [float(values[name]) for name in COUNTERS]


def cpu_ns_s(pid: int) -> float:
    """CPU seconds of a process's live threads, to the nanosecond (/proc/PID/task/*/schedstat): Redis
    spends a few of /proc/PID/stat's 10 ms ticks in a short window."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            total += int((task / "schedstat").read_text().split()[0])
    return total / 1e9


def listener_pid(port: int) -> int | None:
    """The process listening on TCP `port` on this machine (through /proc: the socket's inode, then the
    process holding it), None if there is none this user may read: Kafka or Redis elsewhere."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as lines:
            for line in list(lines)[1:]:
                fields = line.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":  # LISTEN
                    inodes.add(f"socket:[{fields[9]}]")
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if any(os.readlink(fd) in inodes for fd in (proc / "fd").iterdir()):
                return int(proc.name)
    return None


@dataclass(frozen=True)
class Window:
    """One measured window of the load against `engines` engine processes. CPU in ms per action: every
    engine's own (its CPU over the actions it accepted), all of theirs together, and the load's,
    Kafka's and Redis's (None where that process is not on this machine). Beside them, in cores, what
    the engines and Kafka spend with no load at all (IDLE_S before the load starts): the fixed part
    of their cost, which a window's CPU per action includes."""

    engines: int
    rate: float  # actions/s acknowledged to the load
    per_engine_ms: list[float | None]  # None: an engine that accepted no action in the window
    engines_ms: float
    load_ms: float
    kafka_ms: float | None
    redis_ms: float | None
    idle_engines: float  # cores
    idle_kafka: float | None
    transactions: float  # Kafka transactions (group commit batches) per accepted action
    appends_per_transaction: float

    def __str__(self) -> str:
        count = self.engines
        each = ", ".join("-" if ms is None else f"{ms:.2f}" for ms in self.per_engine_ms)
        engines = _ms(self.above_idle(self.engines_ms, self.idle_engines))
        kafka = _ms(self.above_idle(self.kafka_ms, self.idle_kafka))
        return (
            f"{count} engine process{'es' if count > 1 else ''}: {self.rate:7,.0f} actions/s   "
            f"CPU ms/action: each engine {each}; all engines {self.engines_ms:.2f} ({engines} above "
            f"idle); load {self.load_ms:.2f}; Kafka {_ms(self.kafka_ms)} ({kafka} above idle); "
            f"Redis {_ms(self.redis_ms, 3)}   idle cores: engines {self.idle_engines:.3f}, "
            f"Kafka {_ms(self.idle_kafka, 3)}   {self.transactions:.2f} transactions/action "
            f"({self.appends_per_transaction:.1f} appends each)"
        )

    def above_idle(self, ms: float | None, idle_cores: float | None) -> float | None:
        """CPU ms per action beyond what the process spends idle over the same time: the marginal cost."""
        return None if ms is None or idle_cores is None else ms - idle_cores * 1000 / self.rate


def _ms(value: float | None, places: int = 2) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.{places}f}"


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
    engines: Engines,
    generator: LoadGenerator,
    tables: int,
    warmup_s: float,
    seconds: float,
    *,
    servers: dict[str, int | None],
) -> Window:
    """One window of the load; `servers` the pids of Kafka and Redis ("kafka", "redis") if local."""
    pids = [e.proc.pid for e in engines.running if e.proc is not None]

    def sample(load_pid: int) -> list[float]:
        return [cpu_s(pid) for pid in (*pids, load_pid)] + [
            math.nan if pid is None else cpu_ns_s(pid) for pid in servers.values()
        ]

    kafka = servers["kafka"]
    idle = [cpu_s(pid) for pid in pids], math.nan if kafka is None else cpu_ns_s(kafka)
    time.sleep(IDLE_S)
    idle_engines = (sum(cpu_s(pid) for pid in pids) - sum(idle[0])) / IDLE_S
    idle_kafka = None if kafka is None else (cpu_ns_s(kafka) - idle[1]) / IDLE_S
    with load(generator, engines.running[0].address, tables, warmup_s, seconds) as proc:
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "window":
            raise SystemExit("bench-scale: the load generator stopped before its window")
        before, counted = sample(proc.pid), engines.counters()
        line = proc.stdout.readline().split()
        if not line or line[0] != "done":
            raise SystemExit("bench-scale: the load generator stopped during its window")
        spent = [b - a for a, b in zip(before, sample(proc.pid), strict=True)]
        counted = [
            [b - a for a, b in zip(old, new, strict=True)]
            for old, new in zip(counted, engines.counters(), strict=True)
        ]
    actions, wall = int(line[1]), float(line[2])
    if actions < 1 or wall <= 0:  # a window too short, or a load that never got going
        raise SystemExit(f"bench-scale: no action acknowledged in the {wall:g} s window: lengthen --seconds")

    def per_action(cpu: float, count: float = actions) -> float | None:
        return None if math.isnan(cpu) or count < 1 else cpu * 1000 / count

    engines_cpu, (load_cpu, kafka_cpu, redis_cpu) = spent[: len(pids)], spent[len(pids) :]
    return Window(
        engines=len(pids),
        rate=actions / wall,
        per_engine_ms=[per_action(c, n[0]) for c, n in zip(engines_cpu, counted, strict=True)],
        engines_ms=sum(engines_cpu) * 1000 / actions,
        load_ms=load_cpu * 1000 / actions,
        kafka_ms=per_action(kafka_cpu),
        redis_ms=per_action(redis_cpu),
        idle_engines=idle_engines,
        idle_kafka=idle_kafka,
        transactions=sum(n[2] for n in counted) / max(1.0, sum(n[0] for n in counted)),
        appends_per_transaction=sum(n[1] for n in counted) / max(1.0, sum(n[2] for n in counted)),
    )


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
class Rebalance:
    """A join or leave under load, in seconds from the change (the newcomer's start, or the SIGTERM):
    until the owners' directory named only the engines left running, each one owning some; until
    every probed game had accepted a move after that; and the longest any probed game went without an
    accepted move across the change (its last one before, to its first one after), beside the longest
    gap between two of a game's moves in the QUIET_S before the change (the box's own, with no change)."""

    settled: float
    all_accepted: float
    longest_stall: float
    median_stall: float
    quiet_stall: float

    def __str__(self) -> str:
        quiet = (
            f"{self.quiet_stall:.1f} s"
            if math.isfinite(self.quiet_stall)
            else f"no game moved twice in {QUIET_S:g} s"
        )
        return (
            f"directory settled after {self.settled:.1f} s; every probed game accepted a move after it "
            f"{_seconds(self.all_accepted)}; longest a game went without a move {self.longest_stall:.1f} s "
            f"(median game {self.median_stall:.1f} s; before the change, with none: {quiet})"
        )


async def probed_through(
    engines: Engines, player: Player, games: list[str], change: Callable[[], None], timeout_s: float = 120.0
) -> Rebalance:
    """Play `games` (of `create_probes`) one legal action each every PROBE_EVERY_S while `change`
    (a join or a leave) runs and the directory settles; a probed game that ends is followed by a new
    one on the same partition."""
    client = GameClient(engines.running[0].address, player.token, retry_for_s=0, timeout_s=2)
    accepted: list[list[float]] = [[] for _ in games]
    stop = asyncio.Event()

    async def probe(slot: int) -> None:
        game_id = games[slot]
        while not stop.is_set():
            try:
                for seat in range(len(seats(player.id))):
                    legal = await client.legal_actions(game_id, seat)
                    if legal.actions:
                        await client.submit(game_id, seat, legal.actions[0])
                        accepted[slot].append(time.monotonic())
                        break
                else:  # over: a new game on the same partition
                    game_id = f"{games[slot]}-{len(accepted[slot])}"
                    wanted = partition_for(games[slot], engines.partitions)
                    game_id = next(
                        g
                        for i in range(100_000)
                        if partition_for(g := f"{game_id}-{i}", engines.partitions) == wanted
                    )
                    await client.create_game(VARIANT, seats(player.id), game_id)
            except RpcFailure as failure:
                if failure.status not in RETRY_PROBE:
                    raise SystemExit(f"bench-scale: game {game_id}: {failure}") from None
            await asyncio.sleep(PROBE_EVERY_S)

    probes = [asyncio.create_task(probe(slot)) for slot in range(len(games))]
    try:
        await asyncio.sleep(2.0)  # every game playing before the change
        quiet = time.monotonic()
        await asyncio.sleep(QUIET_S)
        began = time.monotonic()
        await asyncio.to_thread(change)
        await asyncio.to_thread(engines.settle, timeout_s)
        settled = time.monotonic()
        deadline = settled + timeout_s
        while any(not times or times[-1] <= settled for times in accepted) and time.monotonic() < deadline:
            await asyncio.sleep(PROBE_EVERY_S)
        ended = time.monotonic()
    finally:
        stop.set()
        await asyncio.gather(*probes)
        await client.close()
    if any(not times or times[-1] <= settled for times in accepted):
        last = math.inf
    else:
        last = max(next(t for t in times if t > settled) for times in accepted) - began
    stalls = [_stall(times, began, ended) for times in accepted]
    gaps = [
        b - a for times in accepted for a, b in itertools.pairwise(t for t in times if quiet <= t <= began)
    ]
    return Rebalance(
        settled - began, last, max(stalls), statistics.median(stalls), max(gaps, default=math.inf)
    )


def _stall(accepted: list[float], began: float, ended: float) -> float:
    """The longest a game went without an accepted move across a change from `began` to `ended`: from
    its last move before the change (or the change) through its moves after it, to `ended`."""
    before = [t for t in accepted if t <= began]
    points = [before[-1] if before else began, *(t for t in accepted if began < t <= ended), ended]
    return max(b - a for a, b in itertools.pairwise(points))


def rebalance_rows(
    engines: Engines, generator: LoadGenerator, args: argparse.Namespace, say: Callable[[str], None]
) -> None:
    """One engine joins the first, then leaves, under `--rebalance-tables` tables of load."""
    engines.resize(1)
    player = generator.player
    partitions = list(range(engines.partitions))
    games = asyncio.run(
        create_probes(engines.running[0].address, player, args.probes, len(partitions), partitions)
    )
    with load(generator, engines.running[0].address, args.rebalance_tables, 1.0, 3600):
        for name, count in (("joins (1 -> 2)", 2), ("leaves (2 -> 1, SIGTERM)", 1)):
            progress(f"bench-scale: an engine {name} under {args.rebalance_tables} tables")
            result = asyncio.run(
                probed_through(engines, player, games, functools.partial(engines.resize, count))
            )
            say(f"an engine {name}, {args.rebalance_tables} tables, {len(games)} games probed: {result}")


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


def throughput_rows(
    engines: Engines,
    generator: LoadGenerator,
    args: argparse.Namespace,
    servers: dict[str, int | None],
    say: Callable[[str], None],
) -> None:
    """Each count of `--engines`, `--reps` times, interleaved (the pool grown and shrunk in turn), then
    each count's medians."""
    windows: dict[int, list[Window]] = {count: [] for count in args.engines}
    for rep in range(args.reps):
        for count in args.engines if rep % 2 == 0 else args.engines[::-1]:
            engines.resize(count)
            progress(f"bench-scale: {args.tables} tables against {count} engine(s), {args.seconds:g} s")
            window = throughput(engines, generator, args.tables, args.warmup, args.seconds, servers=servers)
            windows[count].append(window)
            say(f"{window}")
    if args.reps > 1:
        say(f"medians of {args.reps} windows:")
        for count, runs in windows.items():
            each = [ms for run in runs for ms in run.per_engine_ms if ms is not None]
            say(
                f"  {count} engine(s): {_median(r.rate for r in runs):7,.0f} actions/s   CPU ms/action: "
                f"each engine {_median(each):.2f} (range {min(each):.2f}-{max(each):.2f}); all engines "
                f"{_median(r.engines_ms for r in runs):.2f} "
                f"({_ms(_median(r.above_idle(r.engines_ms, r.idle_engines) for r in runs))} above idle); "
                f"load {_median(r.load_ms for r in runs):.2f}; "
                f"Kafka {_ms(_median(r.kafka_ms for r in runs))} "
                f"({_ms(_median(r.above_idle(r.kafka_ms, r.idle_kafka) for r in runs))} above idle); "
                f"Redis {_ms(_median(r.redis_ms for r in runs), 3)}   idle cores: engines "
                f"{_median(r.idle_engines for r in runs):.3f}, "
                f"Kafka {_ms(_median(r.idle_kafka for r in runs), 3)}"
            )
    first, most = min(windows), max(windows)
    if first != most:
        rate = _median(r.rate for r in windows[most]) / _median(r.rate for r in windows[first])
        cpu = _median(r.engines_ms for r in windows[most]) / _median(r.engines_ms for r in windows[first])
        say(f"ratio, {most} engines / {first}: {rate:.2f}x actions/s, {cpu:.2f}x all engines' CPU per action")


def _median(values: Iterable[float | None]) -> float:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else math.nan


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


PARTS = ("throughput", "rebalance", "failover", "broker")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m meldstream_benches.engine_scale", description=__doc__)
    parser.add_argument("--tables", type=int, default=48, help="tables of the load (2 seats each)")
    parser.add_argument("--seconds", type=float, default=20.0, help="the measured window")
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--partitions", type=int, default=EngineConfig().partitions)
    parser.add_argument(
        "--engines", type=_counts, default=[1, 2], help="engine process counts to measure (1,2,4)"
    )
    parser.add_argument("--reps", type=int, default=1, help="windows per count, interleaved")
    parser.add_argument("--probes", type=int, default=24, help="games probed after a kill, a join or a leave")
    parser.add_argument(
        "--rebalance-tables", type=int, default=100, help="tables of the load during a join and a leave"
    )
    parser.add_argument(
        "--parts", type=_parts, default=list(PARTS), help=f"which parts to run, of {','.join(PARTS)}"
    )
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
    if args.reps < 1 or args.seconds <= 0:
        parser.error("--reps is at least 1 and --seconds above 0")
    parts = (
        {"failover"}
        if args.failover_only
        else set(args.parts) - ({"broker"} if args.no_broker_kill else set())
    )
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
        servers = {
            "kafka": listener_pid(int(kafka.address.rsplit(":", 1)[1])),
            "redis": listener_pid(urllib.parse.urlsplit(store.address).port or 6379),
        }
        print(
            f"Kafka {kafka.address} ({kafka.origin}, pid {servers['kafka']}), Redis {store.address} "
            f"({store.origin}, pid {servers['redis']}); {os.cpu_count()} cores shared by the engines, "
            "the load process, Kafka and Redis"
        )
        unbuilt = (
            ""
            if generator.go or args.load
            else f" ({GO_LOAD.relative_to(ROOT)} is not built: make go-client)"
        )
        print(f"load generator: {generator}{unbuilt}")
        for part in [p for p in PARTS if p in parts and p != "broker"]:
            engines = Engines(kafka.address, store.address, args.partitions, logs, verifying)
            try:
                if part == "throughput":
                    throughput_rows(engines, generator, args, servers, say)
                elif part == "rebalance":
                    rebalance_rows(engines, generator, args, say)
                else:
                    engines.resize(2)
                    failover_rows(engines, generator, args, say)
            finally:
                engines.stop()
        if "broker" in parts:
            progress("bench-scale: broker SIGKILL on a 3-node cluster")
            after_kill, after_restart = broker_kill(
                store.address, args.partitions, args.probes, logs, identity=verifying, player=generator.player
            )
            say(
                f"broker SIGKILL (1 of 3 nodes, replication 3, min ISR 2): every game accepts an action "
                f"again {_seconds(after_kill)}; after its restart, {_seconds(after_restart)}"
            )
    return 0


def _counts(text: str) -> list[int]:
    counts = [int(part) for part in text.split(",")]
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError("engine counts are whole numbers from 1, comma-separated")
    return counts


def _parts(text: str) -> list[str]:
    parts = text.split(",")
    if unknown := [p for p in parts if p not in PARTS]:
        raise argparse.ArgumentTypeError(f"unknown parts {unknown}: choose among {','.join(PARTS)}")
    return parts


if __name__ == "__main__":
    sys.exit(main())
