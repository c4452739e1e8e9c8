"""``python -m rummy_matchmaking.bench`` (part of ``make bench-platform``): seating a large queue.

Enqueues N tickets (ratings drawn from a seeded normal distribution, as scoring would have published
them) into a `MatchmakingApp` publishing TableFormed to a real Kafka topic (servers found or started
by rummy_infra), then pairs until every ticket is seated. Reports tickets seated per second, with the
time spent pairing and publishing apart.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
import uuid

from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy_infra import provide_kafka
from rummy_service.auth import DEV_SECRET, Principal, TokenIssuer
from rummy_store.publisher import KafkaPublisher

from rummy_matchmaking.app import MatchmakingApp
from rummy_matchmaking.pairing import PairingRules, form_tables

MIN_PLAYERS = 3  # tables of 3-4; fewer than 3 left cannot form a table and end the run


async def seat_queue(app: MatchmakingApp, tickets: int, seed: int, rules: PairingRules) -> dict[str, float]:
    rng = random.Random(seed)
    for i in range(tickets):
        player = f"bench-{i}"
        app.ratings[("kalooki", player)] = (5, rng.gauss(0.0, 10.0))
        await app.enqueue(
            Principal(player, "player"), mm.EnqueueRequest(variant="kalooki", min_players=3, max_players=4)
        )
    queued = [s.ticket for s in app.tickets.values()]
    start = time.perf_counter()
    form_tables(queued, time.monotonic(), {"kalooki": rules})
    pairing_s = time.perf_counter() - start
    start = time.perf_counter()
    rounds = 0
    while sum(s.state == mm.TICKET_STATE_QUEUED for s in app.tickets.values()) >= MIN_PLAYERS:
        await app.pair_once()
        rounds += 1
        await asyncio.sleep(0.05)  # waiting tickets widen their windows, as in the service's loop
    total_s = time.perf_counter() - start
    seated = sum(s.state == mm.TICKET_STATE_SEATED for s in app.tickets.values())
    return {
        "seated": seated,
        "total_s": total_s,
        "pairing_s": pairing_s,
        "rounds": rounds,
        "tables": app.tables_formed,
    }


SCENARIOS = {
    # every ticket acceptable to every other: the cost of pairing and publishing alone
    "capacity": PairingRules(base_window=1e9, fill_after_s=0.0),
    # the service's defaults: ratings N(0, 10), window 3 widening 1/s, so waiting sets the pace
    "rating-aware": PairingRules(),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tickets", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=6)
    args = parser.parse_args()
    with provide_kafka() as kafka:
        for name, rules in SCENARIOS.items():
            prefix = f"bench-{uuid.uuid4().hex[:8]}"
            topic = f"{prefix}.rummy.matchmaking.events.v1"
            log = KafkaPublisher(kafka.address, topic, 3)
            app = MatchmakingApp(log, TokenIssuer(DEV_SECRET), {"kalooki": rules})
            print(f"matchmaking/{name}: seating {args.tickets} tickets ({kafka.origin})", file=sys.stderr)
            result = asyncio.run(seat_queue(app, args.tickets, args.seed, rules))
            app.close()
            log.close()
            rate = result["seated"] / result["total_s"]
            print(
                f"matchmaking/{name}: {int(result['seated'])}/{args.tickets} tickets seated at"
                f" {int(result['tables'])} tables in {result['total_s']:.2f} s = {rate:.0f} tickets/s"
                f" ({int(result['rounds'])} pairing rounds; one pass over the full queue"
                f" {result['pairing_s'] * 1000:.0f} ms; TableFormed published to Kafka, acks=all)"
            )


if __name__ == "__main__":
    main()
