"""A service that tests and benchmarks start as a process: waiting for it to answer SERVING, or for
it to refuse to start."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc


def wait_serving(
    address: str,
    process: subprocess.Popen[Any],
    timeout_s: float = 60.0,
    credentials: grpc.ChannelCredentials | None = None,
) -> None:
    """Return once gRPC health at `address` says SERVING (asked over TLS with `credentials`);
    `RuntimeError` if `process` exits first or the time runs out. Polled, not watched: the server may
    not listen yet, and a Watch would need it to.
    """
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the process serving {address} exited (code {process.returncode}) at start")
        channel = (
            grpc.insecure_channel(address)
            if credentials is None
            else grpc.secure_channel(address, credentials)
        )
        with contextlib.suppress(grpc.RpcError), channel:
            health: Any = health_pb2_grpc.HealthStub(channel)
            reply = health.Check(health_pb2.HealthCheckRequest(), timeout=1)
            if reply.status == health_pb2.HealthCheckResponse.SERVING:
                return
        time.sleep(0.2)
    raise RuntimeError(f"{address} was not SERVING after {timeout_s:.0f} s")


def stop_process(proc: subprocess.Popen[Any], sig: int = signal.SIGTERM, timeout_s: float = 15) -> None:
    """Ask `proc` to stop with `sig` (after SIGCONT: a paused process cannot act on it), wait up to
    `timeout_s`, then kill it; returns once it has exited."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGCONT)
        proc.send_signal(sig)
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
    proc.wait()


def refused_at_start(module: str, env: dict[str, str]) -> str:
    """Run `python -m module` with `env` added to this environment; it must exit with code 1 and
    no traceback (a refusal an operator can act on, not a crash). Returns its stderr."""
    done = subprocess.run(
        [sys.executable, "-m", module],
        check=False,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr


class ServiceProcess:
    """`python -m module` with the given environment, serving at `address`: started (until SERVING),
    killed, paused, resumed and started again on the same port, as fault tests need."""

    def __init__(self, module: str, env: dict[str, str], address: str, log: Path) -> None:
        self.module = module
        self.env = env
        self.address = address
        self._log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 60.0) -> None:
        with self._log.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", self.module], env=self.env, stdout=out, stderr=out
            )
        try:
            wait_serving(self.address, self.proc, timeout_s)
        except RuntimeError as failure:
            raise AssertionError(f"{failure}:\n{self._log.read_text()[-3000:]}") from None

    def signal(self, sig: signal.Signals) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)

    def kill(self) -> None:
        self.signal(signal.SIGKILL)
        assert self.proc is not None
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)
