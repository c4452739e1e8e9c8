"""What scoring tells operators: results scored (Prometheus, by variant) and one log line per result
with its game's and players' ids. Consumer progress and lag are `rummy_service.consumer`'s."""

from __future__ import annotations

import logging
from typing import Final

from prometheus_client import Counter
from rummy.scoring.v1 import scoring_pb2 as sc

log = logging.getLogger("rummy_scoring")

RESULTS: Final = Counter(
    "rummy_scoring_results_scored", "Games scored to their end (MatchScored), by variant", ["variant"]
)


def result_scored(game_id: str, match: sc.MatchScored) -> None:
    """A finished game's result, committed with its ratings (logged once: a redelivery is a no-op)."""
    RESULTS.labels(match.variant).inc()
    facts = {"game_id": game_id, "variant": match.variant, "players": list(match.player_ids)}
    log.info("result scored", extra={**facts, "winners": list(match.winners), "deals": match.deals})
