"""`python -m rummy_identity`: identity as a process, configured by environment variables only."""

from __future__ import annotations

from rummy_service.process import run_service

from rummy_identity import config as identity_config
from rummy_identity.service import RunningIdentity, start_identity


def main() -> None:
    def describe(running: RunningIdentity) -> str:
        return f"identity listening on {running.address}"

    run_service("rummy_identity", identity_config.load, start_identity, describe, "IDENTITY_METRICS_ADDRESS")


if __name__ == "__main__":
    main()
