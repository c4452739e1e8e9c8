"""What an engine tells operators: its facts in the log (JSON from a running process, text in process)
and its Prometheus metrics scraped over HTTP after real calls, on the embedded store and on Kafka."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import grpc
import pytest
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families
from rummy.game.v1 import game_service_pb2 as gs
from rummy_client import GameClient
from rummy_engine import telemetry
from rummy_engine.config import EngineConfig
from rummy_engine.engine import RunningEngine
from rummy_infra.local import free_port
from rummy_infra.serving import stop_process, wait_serving
from rummy_service import logs, metrics

from .conftest import People
from .test_service import refused, run

NO_TIMER = 600_000
DASHBOARD = Path(__file__).resolve().parents[3] / "deploy" / "grafana" / "engine-dashboard.json"
SAMPLES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(url: str) -> Samples:
    with urllib.request.urlopen(url, timeout=10) as reply:
        text = reply.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


# The scenario's SubmitActions by gRPC status: two moves, then three refusals.
SUBMIT: Final = {"grpc_service": "rummy.game.v1.GameService", "grpc_method": "SubmitAction"}
HANDLED: Final = {"OK": 2, "FAILED_PRECONDITION": 1, "PERMISSION_DENIED": 1, "UNAUTHENTICATED": 1}


def settled_scrape(url: str, before: Samples) -> Samples:
    """A scrape once gRPC's handled counter shows every SubmitAction of `HANDLED` since `before` (at
    most 5 s): the server counts a call after its status went out, so a scrape right after a refused
    call may come first."""
    deadline = time.monotonic() + 5
    while True:
        after = scrape(url)
        moved = sum(
            value(after, "grpc_server_handled_total", grpc_code=code, **SUBMIT)
            - value(before, "grpc_server_handled_total", grpc_code=code, **SUBMIT)
            for code in HANDLED
        )
        if moved >= sum(HANDLED.values()) or time.monotonic() > deadline:
            return after
        time.sleep(0.05)


@contextlib.contextmanager
def engine_process(config: EngineConfig, metrics: str, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """`python -m rummy_engine` with JSON logs to `log` and /metrics at `metrics`, until SIGTERM."""
    env = {**os.environ, **config.to_env(), "ENGINE_METRICS_ADDRESS": metrics, "LOG_FORMAT": "json"}
    env.pop("LOG_LEVEL", None)
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "rummy_engine"], env=env, stdout=subprocess.DEVNULL, stderr=out
        )
    try:
        wait_serving(config.address, proc, timeout_s=90)
        yield proc
    finally:
        stop_process(proc, timeout_s=30)


def test_a_running_engine_logs_facts_as_json_and_counts_actions_on_metrics(
    stores: dict[str, Any], tmp_path: Path, people: People
) -> None:
    address, metrics = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
    url = f"http://{metrics}/metrics"
    config = EngineConfig(address=address, turn_timeout_ms=NO_TIMER, **stores)
    log = tmp_path / "engine.log"
    bogus = "bogus-token-never-logged"

    async def scenario() -> tuple[Samples, Samples, int]:
        seats = people.clients(address)
        async with people.client(address, people.ops) as ops:
            created = await ops.create_game("kalooki", people.ids, "obs", turn_timeout_ms=NO_TIMER)
        turn = created.view.turn
        mover, other, third = seats[turn], seats[(turn + 1) % 3], seats[(turn + 2) % 3]
        stream: Any = mover.updates("obs", turn)  # an async generator: closed below
        await anext(stream)  # the opening view: one subscriber now
        before = scrape(url)
        for _ in range(2):
            legal = await mover.legal_actions("obs", turn)
            await mover.submit("obs", turn, legal.actions[0])
        draw = gs.Action(draw_from_stock=gs.DrawFromStock())
        rule = await refused(third.submit("obs", (turn + 2) % 3, draw))  # the turn is turn's or the next's
        seat = await refused(other.submit("obs", turn, draw))
        nobody = GameClient(address, bogus, retry_for_s=0)
        unknown = await refused(nobody.submit("obs", turn, draw))
        assert (rule.status, seat.status, unknown.status) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            grpc.StatusCode.PERMISSION_DENIED,
            grpc.StatusCode.UNAUTHENTICATED,
        )
        after = settled_scrape(url, before)
        await stream.aclose()
        for client in (*seats, nobody):
            await client.close()
        return before, after, turn

    with engine_process(config, metrics, log):
        before, after, turn = asyncio.run(scenario())

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("rummy_engine_actions_accepted_total") == 2
    assert moved("rummy_engine_action_seconds_count") == 2 and moved("rummy_engine_action_seconds_sum") > 0
    assert moved("rummy_engine_actions_refused_total", code="not_your_turn") == 1
    assert moved("rummy_engine_actions_refused_total", code="not_your_seat") == 1
    assert moved("rummy_engine_actions_refused_total", code="unauthenticated") == 1
    assert moved("rummy_engine_append_seconds_count") == 2  # a draw and a discard, one append each
    for code, count in HANDLED.items():
        assert moved("grpc_server_handled_total", grpc_code=code, **SUBMIT) == count
    assert value(before, "rummy_engine_games_created_total", variant="kalooki") == 1
    assert value(before, "rummy_engine_live_games") == 1
    assert value(before, "rummy_engine_stream_subscribers") == 1
    assert moved("rummy_engine_append_batch_size_count") == 2  # one batch an action here (one at a time)
    assert (
        moved("rummy_engine_append_batch_size_sum") == 2
        and moved("rummy_engine_append_batch_seconds_sum") > 0
    )

    text = log.read_text()
    assert bogus not in text
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]  # every line is one object
    facts = {line["message"]: line for line in lines if line.get("game_id") == "obs"}
    assert facts["game created"]["players"] == people.ids and facts["game created"]["variant"] == "kalooki"
    other, third = (turn + 1) % 3, (turn + 2) % 3
    assert {k: facts["action refused"][k] for k in ("seat", "player", "code", "status")} == {
        "seat": third,
        "player": people.ids[third],
        "code": "not_your_turn",
        "status": "FAILED_PRECONDITION",
    }
    denied = [line for line in lines if line["message"] == "authorization failed"]
    assert [(d["status"], d.get("player"), d.get("code")) for d in denied] == [
        ("PERMISSION_DENIED", people.ids[other], "not_your_seat"),
        ("UNAUTHENTICATED", None, "unauthenticated"),
    ]
    assert all(d["method"] == "SubmitAction" and d["game_id"] == "obs" and d["seat"] == turn for d in denied)
    assert all(line["level"] in ("INFO", "WARNING") and line["logger"] and line["time"] for line in lines)


def test_timeouts_away_and_return_and_the_end_of_a_game_are_facts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, people: People
) -> None:
    async def scenario(engine: RunningEngine) -> None:
        seats = people.clients(engine.address)
        async with people.client(engine.address, people.ops) as ops:
            created = await ops.create_game("kalooki", people.ids, "slow", turn_timeout_ms=50)
        first = created.view.turn
        for _ in range(100):
            await asyncio.sleep(0.05)
            if any(r.getMessage() == "player away" for r in caplog.records):
                break
        await seats[first].return_to_table("slow", first)
        for client in seats:
            await client.close()

    with caplog.at_level(logging.INFO, logger="rummy_engine"):
        run(tmp_path, people, scenario, away_after=1, away_grace_ms=60_000)
    facts = [(r.getMessage(), logs.fields(r)) for r in caplog.records if r.name == "rummy_engine"]
    timed = next(f for m, f in facts if m == "turn timed out")
    first = timed["seat"]
    assert timed["game_id"] == "slow" and timed["player"] == people.ids[first] and timed["in_a_row"] == 1
    assert timed["limit_ms"] == 50
    assert ("player away", {"game_id": "slow", "seat": first, "player": people.ids[first]}) in facts
    assert ("player returned", {"game_id": "slow", "seat": first, "player": people.ids[first]}) in facts
    away = next(r for r in caplog.records if r.getMessage() == "player away")
    assert (
        logs.TextFormatter()
        .format(away)
        .endswith(f"INFO rummy_engine player away game_id=slow seat={first} player={people.ids[first]}")
    )


def test_the_dashboard_queries_only_metrics_the_engine_serves() -> None:
    assert telemetry.ACCEPTED and metrics.CALLS  # registered in the process's registry
    served = {
        family.name + suffix for family in REGISTRY.collect() for suffix in SAMPLES.get(family.type, ())
    }
    dashboard = json.loads(DASHBOARD.read_text())
    queries = [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    asked = {name for query in queries for name in re.findall(r"\b(?:rummy_|grpc_server_)[a-z_]+", query)}
    assert len(queries) >= 15 and len(asked) >= 11
    assert asked <= served, sorted(asked - served)
