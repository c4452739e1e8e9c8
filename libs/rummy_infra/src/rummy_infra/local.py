"""Kafka and Redis as local processes, through the same scripts developers use (deploy/local/*.sh).

Each call picks free loopback ports and a fresh state directory, so concurrent test runs never share a
server, and stops the process on exit.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path


def repo_root() -> Path:
    """The checkout holding deploy/local (``MELDSTREAM_ROOT`` or the nearest parent of this file)."""
    if env := os.environ.get("MELDSTREAM_ROOT"):
        return Path(env)
    for parent in Path(__file__).resolve().parents:
        if (parent / "deploy" / "local" / "kafka.sh").is_file():
            return parent
    raise RuntimeError("cannot find deploy/local/kafka.sh above rummy_infra; set MELDSTREAM_ROOT")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _script(name: str, action: str, env: dict[str, str]) -> str:
    result = subprocess.run(
        [str(repo_root() / "deploy" / "local" / name), action],
        env={**os.environ, **env, "MELDSTREAM_WATCH_PID": str(os.getpid())},
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"{name} {action} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result.stdout


@contextmanager
def state_dir(kind: str) -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix=f"meldstream-{kind}-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@contextmanager
def kafka() -> Iterator[tuple[str, str]]:
    """Start a KRaft broker on free ports; yield (bootstrap address, Kafka version)."""
    with state_dir("kafka") as state:
        port = free_port()
        env = {
            "MELDSTREAM_KAFKA_PORT": str(port),
            "MELDSTREAM_KAFKA_CONTROLLER_PORT": str(free_port()),
            "MELDSTREAM_KAFKA_STATE": str(state),
        }
        try:
            _script("kafka.sh", "start", env)
            libs = Path(os.environ.get("MELDSTREAM_KAFKA_LIBS", repo_root() / ".local" / "kafka" / "libs"))
            jars = [
                m.group(1)
                for p in libs.glob("kafka_2.13-*.jar")
                if (m := re.search(r"-([\d.]+)\.jar$", p.name))
            ]
            yield f"127.0.0.1:{port}", jars[0] if jars else "?"
        finally:
            _script("kafka.sh", "stop", env)


class _Restartable:
    """A private server (`deploy/local/<kind>.sh`) on fixed ports and state, which a fault test kills
    (SIGKILL: no shutdown, in-flight requests unanswered) and starts again."""

    def __init__(self, kind: str, state: Path, env: dict[str, str]) -> None:
        self._kind = kind
        self._state = state
        self._env = env

    def start(self) -> None:
        _script(f"{self._kind}.sh", "start", self._env)

    def kill(self) -> None:
        pidfile = self._state / f"{self._kind}.pid"
        pid = int(pidfile.read_text())
        os.kill(pid, signal.SIGKILL)
        while Path(f"/proc/{pid}").exists() and "zombie" not in _status(pid):
            time.sleep(0.05)
        pidfile.unlink()

    def stop(self) -> None:
        _script(f"{self._kind}.sh", "stop", self._env)


class RestartableKafka(_Restartable):
    """A private broker; killed, it comes back with its log (its state directory is kept). Alone, or a
    node of a cluster (`cluster`: kafka.sh's node id, voters and cluster id; see `kafka_cluster`)."""

    def __init__(
        self, state: Path, *, controller_port: int | None = None, cluster: Mapping[str, str] | None = None
    ) -> None:
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        env = {
            "MELDSTREAM_KAFKA_PORT": str(self.port),
            "MELDSTREAM_KAFKA_CONTROLLER_PORT": str(controller_port or free_port()),
            "MELDSTREAM_KAFKA_STATE": str(state),
            **(cluster or {}),
        }
        super().__init__("kafka", state, env)


def _status(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return "zombie"


@contextmanager
def restartable_kafka() -> Iterator[RestartableKafka]:
    with state_dir("kafka") as state:
        broker = RestartableKafka(state)
        try:
            broker.start()
            yield broker
        finally:
            broker.stop()


@contextmanager
def redis() -> Iterator[tuple[str, str]]:
    """Start redis-server on a free port without persistence; yield (URL, version)."""
    with state_dir("redis") as state:
        port = free_port()
        env = {"MELDSTREAM_REDIS_PORT": str(port), "MELDSTREAM_REDIS_STATE": str(state)}
        try:
            _script("redis.sh", "start", env)
            version = subprocess.run(
                ["redis-server", "--version"], capture_output=True, text=True, check=True
            )
            match = re.search(r"v=([\d.]+)", version.stdout)
            yield f"redis://127.0.0.1:{port}/0", match.group(1) if match else "?"
        finally:
            _script("redis.sh", "stop", env)


class RestartableRedis(_Restartable):
    """A private redis-server. It keeps nothing on disk, so it comes back empty, as a cache that was lost."""

    def __init__(self, state: Path) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        super().__init__(
            "redis", state, {"MELDSTREAM_REDIS_PORT": str(self.port), "MELDSTREAM_REDIS_STATE": str(state)}
        )


@contextmanager
def restartable_redis() -> Iterator[RestartableRedis]:
    with state_dir("redis") as state:
        server = RestartableRedis(state)
        try:
            server.start()
            yield server
        finally:
            server.stop()
