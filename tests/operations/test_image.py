"""deploy/service.Dockerfile, read (no Docker engine runs here to build it): a runtime stage with the
runtime dependencies only, an unprivileged user (the uid deploy/k8s runs), a HEALTHCHECK and a command
through deploy/image/meldstream-service, which runs here as the image runs it (gRPC health for the
services, HTTP for the web gateway), and every service module, the gateway and the meldstream command
inside."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]
from meldstream_cli.health import SERVICES
from rummy_infra.local import free_port

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "deploy" / "service.Dockerfile"
SCRIPT = ROOT / "deploy" / "image" / "meldstream-service"
MODULES = {**{service: f"rummy_{service}" for service in SERVICES}, "web": "meldstream_web"}


def _instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    joined = re.sub(
        r"\\\n\s*", " ", "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    )
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1])
        for line in joined.splitlines()
        if line.strip()
    ]


def _stages() -> list[list[tuple[str, str]]]:
    stages: list[list[tuple[str, str]]] = []
    for instruction in _instructions(DOCKERFILE.read_text()):
        if instruction[0] == "FROM":
            stages.append([])
        elif stages:
            stages[-1].append(instruction)
    return stages


def test_the_image_copies_only_what_the_repository_has() -> None:
    for stage in _stages():
        for name, arguments in stage:
            if name == "COPY" and "--from" not in arguments:
                *sources, _ = (word for word in arguments.split() if not word.startswith("--"))
                for source in sources:
                    assert (ROOT / source).exists(), f"COPY {source}: not in the repository"


def test_the_runtime_stage_installs_the_runtime_set_and_runs_unprivileged() -> None:
    build, runtime = _stages()
    text = " ".join(arguments for _, arguments in runtime)
    assert "requirements/runtime.txt" in text and "lock.txt" not in text
    assert "pip check" in text
    assert not re.search(r"\b(pytest|mypy|ruff|grpcio-tools|hypothesis)\b", text)
    assert any("grpcio-tools" in arguments for _, arguments in build)  # protoc, in the build stage only
    users = [arguments for name, arguments in runtime if name == "USER"]
    assert users and users[-1].split(":")[0] not in ("0", "root")
    for manifest in (ROOT / "deploy" / "k8s" / "base").glob("*.yaml"):
        for document in yaml.safe_load_all(manifest.read_text()):
            if document and document.get("kind") == "Deployment":
                security = document["spec"]["template"]["spec"]["securityContext"]
                assert str(security["runAsUser"]) == users[-1].split(":")[0], manifest.name


def test_the_health_check_and_the_command_are_the_script_the_image_holds() -> None:
    _, runtime = _stages()
    health = next(arguments for name, arguments in runtime if name == "HEALTHCHECK")
    command = next(arguments for name, arguments in runtime if name == "CMD")
    assert health.endswith('CMD ["meldstream-service", "health"]'), health
    assert command == '["meldstream-service", "run"]', command
    copies = [arguments for name, arguments in runtime if name == "COPY"]
    assert any("deploy/image/meldstream-service /usr/local/bin/meldstream-service" in c for c in copies)
    ignore = (ROOT / "deploy" / "service.Dockerfile.dockerignore").read_text().splitlines()
    assert "!deploy/image/meldstream-service" in ignore  # in the build context, after `**`
    assert os.access(SCRIPT, os.X_OK)
    exposed = next(arguments for name, arguments in runtime if name == "EXPOSE").split()
    assert "8080" in exposed  # the gateway's WEB_ADDRESS port in compose and deploy/k8s
    for module in MODULES.values():  # each SERVICE the image is built for: its module
        assert importlib.util.find_spec(f"{module}.__main__") is not None, module
    assert importlib.util.find_spec("meldstream_cli.main") is not None  # the meldstream command


def _script(*args: str, env: dict[str, str], path: str | None = None) -> subprocess.CompletedProcess[str]:
    """The script as the image runs it: sh (the image's dash), `python` the first on PATH."""
    environment = {
        **os.environ,
        "PATH": path or f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    return subprocess.run(
        ["sh", str(SCRIPT), *args],
        env={**environment, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_command_runs_each_service_module_and_refuses_another(tmp_path: Path) -> None:
    shim = tmp_path / "python"  # a `python` that says what it was asked to run
    shim.write_text('#!/bin/sh\necho "python $*"\n')
    shim.chmod(0o755)
    path = f"{tmp_path}{os.pathsep}/usr/bin{os.pathsep}/bin"
    for service, module in MODULES.items():
        done = _script("run", env={"MELDSTREAM_SERVICE": service}, path=path)
        assert (done.returncode, done.stdout) == (0, f"python -m {module}\n"), (service, done.stderr)
    for service in ("", "gateway", "rummy_engine"):
        done = _script("run", env={"MELDSTREAM_SERVICE": service}, path=path)
        assert (
            done.returncode == 2 and "is none of identity, engine, matchmaking, scoring, web" in done.stderr
        )
        assert done.stdout == ""


def test_the_health_check_fails_in_one_line_when_the_service_does_not_answer() -> None:
    env = {"MELDSTREAM_SERVICE": "matchmaking", "MATCHMAKING_ADDRESS": f"0.0.0.0:{free_port()}"}
    done = _script("health", env=env)
    assert done.returncode == 1
    assert re.fullmatch(r"meldstream health: 127\.0\.0\.1:\d+: no answer \(.*\): .*\n", done.stderr), (
        done.stderr
    )


def test_the_gateway_health_check_fails_in_one_line_when_nothing_answers() -> None:
    env = {"MELDSTREAM_SERVICE": "web", "WEB_ADDRESS": f"0.0.0.0:{free_port()}"}
    for probe, path in (("ready", "/readyz"), ("live", "/healthz")):
        done = _script("health", probe, env=env)
        assert done.returncode == 1
        pattern = rf"meldstream-service health: http://127\.0\.0\.1:\d+{re.escape(path)}: no answer \(.*\)\n"
        assert re.fullmatch(pattern, done.stderr), done.stderr


@contextlib.contextmanager
def _gateway(port: int) -> Iterator[None]:
    """`python -m meldstream_web` on 0.0.0.0:`port`, in production mode, its services nowhere: it
    starts anyway (it calls them when a browser asks)."""
    nowhere = f"127.0.0.1:{free_port()}"
    env = {
        **os.environ,
        "WEB_ADDRESS": f"0.0.0.0:{port}",
        **{variable: nowhere for variable in ("ENGINE_ADDRESS", "MATCHMAKING_ADDRESS", "SCORING_ADDRESS")},
        "IDENTITY_ADDRESS": nowhere,
    }
    env.pop("MELDSTREAM_DEV", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "meldstream_web"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the gateway did not start (exit {process.poll()})")
                time.sleep(0.1)
        yield
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_the_gateway_is_live_at_once_and_ready_only_with_identitys_keys_and_the_engine() -> None:
    port = free_port()
    env = {"MELDSTREAM_SERVICE": "web", "WEB_ADDRESS": f"0.0.0.0:{port}"}
    with _gateway(port):
        live = _script("health", "live", env=env)
        assert (live.returncode, live.stderr) == (0, "")
        ready = _script("health", env=env)  # identity and the engine are nowhere: not ready
        assert ready.returncode == 1
        assert re.fullmatch(
            rf"meldstream-service health: http://127\.0\.0\.1:{port}/readyz: HTTP 503\n", ready.stderr
        ), ready.stderr
