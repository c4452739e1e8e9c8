"""`meldstream run --demo 1` as the e2e tests run it: on free ports, until the demo's game is scored."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Mapping

from rummy_infra.local import free_port


def demo_output(args: list[str], env: Mapping[str, str], engine_address: str = "") -> str:
    """What `meldstream run --demo 1 ARGS` printed until its leaderboard (or the demo stopped); it
    is then interrupted and must exit 0. The services listen on free ports, the engine on
    `engine_address` when given."""
    env = {
        **env,
        "ENGINE_ADDRESS": engine_address or f"127.0.0.1:{free_port()}",
        "MATCHMAKING_ADDRESS": f"127.0.0.1:{free_port()}",
        "SCORING_ADDRESS": f"127.0.0.1:{free_port()}",
        "IDENTITY_ADDRESS": f"127.0.0.1:{free_port()}",
    }
    run = [sys.executable, "-m", "meldstream_cli.main", "run", "--demo", "1", *args]
    with subprocess.Popen(run, env=env, stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        lines = []
        try:
            for line in proc.stdout:
                lines.append(line)
                if "leaderboard" in line or "demo stopped" in line:
                    break
        finally:
            proc.send_signal(signal.SIGINT)
            assert proc.wait(60) == 0
    return "".join(lines)
