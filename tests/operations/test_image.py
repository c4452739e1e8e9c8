"""deploy/service.Dockerfile, read (no Docker engine runs here to build it): a runtime stage with the
runtime dependencies only, an unprivileged user (the uid deploy/k8s runs), a HEALTHCHECK through gRPC
health that runs as written, and every service module and the meldstream command inside."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml  # type: ignore[import-untyped]
from meldstream_cli.health import SERVICES
from rummy_infra.local import free_port

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "deploy" / "service.Dockerfile"


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
                *sources, _ = arguments.split()
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


def test_the_health_check_and_the_command_name_modules_the_image_has() -> None:
    _, runtime = _stages()
    health = next(arguments for name, arguments in runtime if name == "HEALTHCHECK")
    command = next(arguments for name, arguments in runtime if name == "CMD")
    assert "python -m meldstream_cli.health --service" in health and "$MELDSTREAM_SERVICE" in health
    assert "rummy_$MELDSTREAM_SERVICE" in command
    for service in SERVICES:  # each SERVICE the image is built for: its module, and the health check knows it
        assert importlib.util.find_spec(f"rummy_{service}.__main__") is not None, service
    assert importlib.util.find_spec("meldstream_cli.main") is not None  # the meldstream command


def test_the_health_check_fails_in_one_line_when_the_service_does_not_answer() -> None:
    env = {**os.environ, "MATCHMAKING_ADDRESS": f"0.0.0.0:{free_port()}"}
    command = [sys.executable, "-m", "meldstream_cli.health", "--service", "matchmaking", "--timeout", "2"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert re.fullmatch(r"meldstream health: 127\.0\.0\.1:\d+: no answer \(.*\): .*\n", done.stderr), (
        done.stderr
    )
