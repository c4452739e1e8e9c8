"""`meldstream run --demo 1 --metrics HOST:PORT`: one /metrics endpoint for the engine, matchmaking and
scoring of the process, and a JSON log in which one game can be followed from table to result."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families
from rummy_infra.local import free_port

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


def test_run_serves_every_services_metrics_on_one_endpoint_and_logs_a_game_from_table_to_result(
    tmp_path: Path,
) -> None:
    metrics = f"127.0.0.1:{free_port()}"
    command = [sys.executable, "-m", "meldstream_cli.main", "run", "--demo", "1", "--metrics", metrics]
    env = {
        **os.environ,
        "ENGINE_ADDRESS": f"127.0.0.1:{free_port()}",
        "MATCHMAKING_ADDRESS": f"127.0.0.1:{free_port()}",
        "SCORING_ADDRESS": f"127.0.0.1:{free_port()}",
        "IDENTITY_ADDRESS": f"127.0.0.1:{free_port()}",
        "WEB_ADDRESS": f"127.0.0.1:{free_port()}",
        "LOG_FORMAT": "json",
    }
    env.pop("LOG_LEVEL", None)
    log = tmp_path / "run.log"
    with (
        log.open("w") as err,
        subprocess.Popen(
            [*command, "--data-dir", str(tmp_path / "engine")],
            env=env,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        ) as proc,
    ):
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                if "leaderboard" in line or "demo stopped" in line:
                    break
            samples = scrape(f"http://{metrics}/metrics")
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(30)
    assert value(samples, "rummy_engine_games_ended_total", variant="kalooki") >= 1
    assert value(samples, "rummy_engine_actions_accepted_total") > 0
    assert value(samples, "rummy_matchmaking_tables_formed_total", variant="kalooki", kind="queue") >= 1
    assert value(samples, "rummy_matchmaking_wait_seconds_count", variant="kalooki") >= 3  # three tickets
    assert ("rummy_matchmaking_queued_tickets", (("variant", "kalooki"),)) in samples
    assert value(samples, "rummy_scoring_results_scored_total", variant="kalooki") >= 1
    assert value(samples, "rummy_consumer_records_total", consumer="rummy-scoring.games") > 0
    for service, method in (
        ("rummy.game.v1.GameService", "SubmitAction"),
        ("rummy.matchmaking.v1.MatchmakingService", "Enqueue"),
        ("rummy.scoring.v1.ScoringService", "GetMatchResult"),
    ):
        labels = {"grpc_service": service, "grpc_method": method, "grpc_code": "OK"}
        assert value(samples, "grpc_server_handled_total", **labels) > 0, labels

    lines = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    table = next(line for line in lines if line["message"] == "table formed")
    game = table["game_id"]
    facts = {line["message"]: line for line in lines if line.get("game_id") == game}
    assert set(facts) >= {"table formed", "game created", "game ended", "result scored"}, facts
    players = table["players"]
    # The demo's three accounts, by account id: logs name accounts, never their (changeable) names.
    assert len(set(players)) == 3 and all(re.fullmatch(r"u[0-9a-f]{16}", p) for p in players), players
    assert table["variant"] == "kalooki"
    assert facts["game created"]["players"] == players and facts["result scored"]["players"] == players
    assert facts["game ended"]["winners"] == facts["result scored"]["winners"]
    assert [(f["logger"], f["level"]) for f in facts.values()] == [
        ("rummy_matchmaking", "INFO"),
        ("rummy_engine", "INFO"),
        ("rummy_engine", "INFO"),
        ("rummy_scoring", "INFO"),
    ]
