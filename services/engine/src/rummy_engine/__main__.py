"""`python -m rummy_engine`: the engine as a process, configured by environment variables only."""

from __future__ import annotations

from rummy_service.process import run_service

from rummy_engine import config as engine_config
from rummy_engine.engine import RunningEngine, start_engine


def main() -> None:
    def describe(engine: RunningEngine) -> str:
        return f"engine listening on {engine.address} ({engine.stores.description})"

    run_service("rummy_engine", engine_config.load, start_engine, describe, "ENGINE_METRICS_ADDRESS")


if __name__ == "__main__":
    main()
