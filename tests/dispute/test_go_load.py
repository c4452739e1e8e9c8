"""The Go client's load mode (`meldstream-go load`, the load of `make bench-scale`) against two engine
processes on real Kafka + Redis: it speaks meldstream_benches.engine_load's protocol (`window`, then
`done N S`), and, sending every call to the first engine, it follows the owner each refusal names, so
the games of the second engine's partitions are played too."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import redis
from rummy_contracts.house import house_bots
from rummy_identity.testing import IdentityProcess
from rummy_infra.local import free_port
from rummy_infra.reading import read_until
from rummy_infra.serving import ServiceProcess
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.ownership import OwnerDirectory

PARTITIONS = 4
LOAD_COMMAND = re.compile(r"[0-9a-f]{32}")  # the command ids the Go load gives its actions
LOAD_GAME = re.compile(r"[0-9a-f]{16}")  # and its game ids


@pytest.fixture(scope="module")
def go_client(go_built: Path) -> Path:
    """The session's build (conftest.go_built), as `make test` builds it."""
    return go_built


@contextlib.contextmanager
def engines(env: dict[str, str], logs: Path, count: int) -> Iterator[list[ServiceProcess]]:
    """`count` engine processes sharing a topic, started side by side."""
    running = []
    for n in range(count):
        address = f"127.0.0.1:{free_port()}"
        running.append(
            ServiceProcess("rummy_engine", {**env, "ENGINE_ADDRESS": address}, address, logs / f"{n}.log")
        )
    try:
        with ThreadPoolExecutor(count) as pool:
            list(pool.map(lambda engine: engine.start(60), running))
        yield running
    finally:
        for engine in running:
            engine.stop()


@pytest.mark.integration
def test_the_go_load_plays_every_engines_games_through_the_first(
    go_client: Path,
    kafka_bootstrap: str,
    redis_url: str,
    unique_prefix: str,
    tmp_path: Path,
    *,
    identity: IdentityProcess,
) -> None:
    topic = f"{unique_prefix}.rummy.game.events.v1"
    env = {
        **os.environ,
        "KAFKA_BOOTSTRAP": kafka_bootstrap,
        "REDIS_URL": redis_url,
        "ENGINE_TOPIC": topic,
        "ENGINE_KEY_PREFIX": f"{unique_prefix}:",
        "ENGINE_PARTITIONS": str(PARTITIONS),
        "ENGINE_TURN_TIMEOUT_MS": "0",
        "MELDSTREAM_DEV": "1",  # the public seed key: nobody's deals to keep secret here
        # One account plays every table (hers and a house bot's seat): a load generator, not a person.
        "MELDSTREAM_LIMIT_PER_ACCOUNT": "100000/second",
        "MELDSTREAM_LIMIT_MOVES": "100000/second",
        **identity.service_env(),
    }
    with engines(env, tmp_path, 2) as (first, second), redis.Redis.from_url(redis_url) as store:
        directory = OwnerDirectory(store, f"{unique_prefix}:", topic)
        deadline = time.monotonic() + 30
        while (
            set((owners := directory.read()).values()) != {first.address, second.address}
            or len(owners) < PARTITIONS
        ):
            assert time.monotonic() < deadline, f"the engines did not split the partitions: {owners}"
            time.sleep(0.2)
        ann = identity.player("load-ann")
        sizes = ["-tables", "16", "-warmup", "2", "-seconds", "3"]
        seats = ["-players", ",".join([ann.id, *house_bots(2)]), "-tokens", ",".join([ann.token()] * 2)]
        command = [str(go_client), "load", "-address", first.address, *sizes, *seats]
        load = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert load.stdout is not None
            window, done = load.stdout.readline(), load.stdout.readline()
        finally:
            load.send_signal(signal.SIGTERM)
            _, stderr = load.communicate(timeout=30)
        assert directory.read() == owners, "the partitions moved while the load played"

    assert window == "window\n", window + stderr
    found = re.fullmatch(r"done (\d+) (\d+\.\d{3})\n", done)
    assert found, done + stderr
    assert int(found.group(1)) > 0 and 2.9 < float(found.group(2)) < 4, done
    assert load.returncode == 0, stderr
    redirects = re.search(r"(\d+) calls sent on to the owner", stderr)
    assert redirects and int(redirects.group(1)) > 0, stderr

    log = KafkaEventLog(kafka_bootstrap, topic, PARTITIONS)
    try:

        def read() -> dict[int, set[str]]:
            return {
                p: {r.game_id for r in log.read_partition(p) if LOAD_COMMAND.fullmatch(r.command_id)}
                for p in range(PARTITIONS)
            }

        def each_engine(played: dict[int, set[str]]) -> bool:
            return {address for p, address in owners.items() if played[p]} == {first.address, second.address}

        played = read_until(read, each_engine, 20)
    finally:
        log.close()
    for engine in (first, second):
        games = set().union(*(played[p] for p, address in owners.items() if address == engine.address))
        assert games, f"no action of the load reached a game of {engine.address}'s partitions"
        assert all(LOAD_GAME.fullmatch(g) for g in games), games
