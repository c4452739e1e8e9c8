"""`python -m rummy_matchmaking`: matchmaking as a process, configured by environment variables only."""

from __future__ import annotations

from rummy_service.process import run_service

from rummy_matchmaking import config as matchmaking_config
from rummy_matchmaking.service import RunningMatchmaking, start_matchmaking


def main() -> None:
    def describe(running: RunningMatchmaking) -> str:
        return f"matchmaking listening on {running.address}"

    run_service(
        "rummy_matchmaking",
        matchmaking_config.load,
        start_matchmaking,
        describe,
        "MATCHMAKING_METRICS_ADDRESS",
    )


if __name__ == "__main__":
    main()
