"""`python -m meldstream_benches.engine_compare --baseline REV`: engine CPU per action, this tree against REV.

On a shared box one run's noise is larger than most changes, so figures are only read as ratios
against a baseline measured in the same run. This starts an engine process of each kind side by side
on the same Kafka and Redis (found or started by rummy_infra), each on its own topic: the working
tree's, and REV's (its engine, store and service libraries from `git archive`, first on PYTHONPATH;
everything else is the working tree's). Phases then alternate between them (the order reversed every
repetition): N tables of greedy bots for `--seconds` through the public gRPC API, as `make bench-engine`
plays them, and the engine process's CPU seconds (/proc) divided by the actions. Prints a line per
phase and the medians; `--partitions 3,64` compares topics of those sizes too. `--backend rdkafka`
runs both engines on confluent-kafka (KAFKA_CLIENT) instead of kafka-python; a baseline older than that
backend refuses to start on it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rummy_identity.testing import IdentityProcess, running_identity
from rummy_infra import provide_kafka, provide_redis
from rummy_infra.local import free_port, repo_root
from rummy_infra.serving import wait_serving
from rummy_store.kafka_clients import BACKENDS, KAFKA_PYTHON

from meldstream_benches.engine import PLAYERS, UNLIMITED, _games, _ints, cpu_s

BASELINE_PATHS = ("services/engine/src", "libs/rummy_store/src", "libs/rummy_service/src")
"""What of the baseline revision runs: the engine and the libraries it serves and writes with."""


@dataclass(frozen=True, slots=True)
class Running:
    name: str
    partitions: int
    address: str
    proc: subprocess.Popen[bytes]


def _extract(rev: str, into: Path) -> str:
    """REV's engine, store and service sources under `into`; the PYTHONPATH that puts them first."""
    archive = subprocess.run(
        ["git", "-C", str(repo_root()), "archive", rev, *(p.split("/src")[0] for p in BASELINE_PATHS)],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return os.pathsep.join(str(into / p) for p in BASELINE_PATHS)


def _start(
    name: str,
    pythonpath: str,
    identity: IdentityProcess,
    partitions: int,
    *,
    kafka: str,
    redis: str,
    client: str,
) -> Running:
    address = f"127.0.0.1:{free_port()}"
    tag = f"compare-{name}-{os.getpid()}-{int(time.time())}-p{partitions}"
    env = {
        **os.environ,
        "ENGINE_ADDRESS": address,
        "ENGINE_TURN_TIMEOUT_MS": "0",
        **UNLIMITED,
        **identity.service_env(),
        "KAFKA_BOOTSTRAP": kafka,
        "KAFKA_CLIENT": client,
        "REDIS_URL": redis,
        "ENGINE_TOPIC": f"{tag}.rummy.game.events.v1",
        "ENGINE_KEY_PREFIX": f"{tag}:",
        "ENGINE_GROUP": f"{tag}.engines",
        "ENGINE_PARTITIONS": str(partitions),
        "LOG_LEVEL": "WARNING",  # each game's creation is an INFO line
    }
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    proc = subprocess.Popen([sys.executable, "-m", "rummy_engine"], env=env, stdout=subprocess.DEVNULL)
    try:
        wait_serving(address, proc)
    except RuntimeError as failure:
        proc.terminate()
        raise SystemExit(f"bench-compare: the {name} engine did not start: {failure}") from None
    return Running(name, partitions, address, proc)


@contextlib.contextmanager
def _engines(
    kinds: list[tuple[str, str]], identity: IdentityProcess, partitions: list[int], client: str
) -> Iterator[list[Running]]:
    with provide_kafka() as kafka, provide_redis() as redis:
        running: list[Running] = []
        try:
            for count in partitions:
                for name, pythonpath in kinds:
                    running.append(
                        _start(
                            name,
                            pythonpath,
                            identity,
                            count,
                            kafka=kafka.address,
                            redis=redis.address,
                            client=client,
                        )
                    )
            yield running
        finally:
            for engine in running:
                engine.proc.terminate()
            for engine in running:
                engine.proc.wait(30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m meldstream_benches.engine_compare", description=__doc__)
    parser.add_argument("--baseline", required=True, help="a git revision (commit, tag, HEAD~3)")
    parser.add_argument("--games", type=_ints, default=[24, 100])
    parser.add_argument("--partitions", type=_ints, default=[64])
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--backend", choices=BACKENDS, default=KAFKA_PYTHON, help="the Kafka client library")
    args = parser.parse_args(argv)
    per: dict[tuple[str, int, int], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="meldstream-compare-") as scratch, running_identity() as identity:
        kinds = [("baseline", _extract(args.baseline, Path(scratch))), ("tree", "")]
        players, ops = [identity.player(name) for name in PLAYERS], identity.operator()
        with _engines(kinds, identity, args.partitions, args.backend) as engines:
            for engine in engines:  # warm up: topics, claims, first games
                print(
                    f"{engine.name} engine, {engine.partitions} partitions: pid {engine.proc.pid}", flush=True
                )
                asyncio.run(_games(engine.address, 12, 4.0, "kalooki", players=players, ops=ops))
            print(
                f"baseline {args.baseline} against the working tree on {args.backend}; "
                f"{os.cpu_count()} cores shared"
            )
            for rep in range(args.reps):
                for games in args.games:
                    for engine in engines if rep % 2 == 0 else engines[::-1]:
                        load = os.getloadavg()[0]
                        cpu = cpu_s(engine.proc.pid)
                        latencies, wall, _, _ = asyncio.run(
                            _games(engine.address, games, args.seconds, "kalooki", players=players, ops=ops)
                        )
                        ms = (cpu_s(engine.proc.pid) - cpu) * 1000 / max(1, len(latencies))
                        per.setdefault((engine.name, engine.partitions, games), []).append(ms)
                        print(
                            f"rep {rep} {engine.name:>8} {engine.partitions:>3} partitions {games:>4} games: "
                            f"{ms:.2f} ms CPU/action, {len(latencies) / wall:,.0f} actions/s, "
                            f"load {load:.1f}",
                            flush=True,
                        )
    print("median engine CPU per action (ms), and tree / baseline:")
    for count in args.partitions:
        for games in args.games:
            base = statistics.median(per[("baseline", count, games)])
            tree = statistics.median(per[("tree", count, games)])
            ratio = tree / base
            line = f"baseline {base:.2f}, tree {tree:.2f}, x{ratio:.2f}"
            print(f"  {count:>3} partitions, {games:>4} games: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
