"""`python -m rummy_scoring`: scoring as a process, configured by environment variables only."""

from __future__ import annotations

from rummy_service.process import run_service

from rummy_scoring import config as scoring_config
from rummy_scoring.service import RunningScoring, start_scoring


def main() -> None:
    def describe(scoring: RunningScoring) -> str:
        return f"scoring listening on {scoring.address}"

    run_service("rummy_scoring", scoring_config.load, start_scoring, describe, "SCORING_METRICS_ADDRESS")


if __name__ == "__main__":
    main()
