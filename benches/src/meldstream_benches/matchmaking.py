"""``python -m meldstream_benches.matchmaking`` (part of ``make bench-platform``): seating a large queue.

Enqueues N tickets (ratings drawn from a seeded normal distribution, as scoring would have published
them) into a `MatchmakingApp` publishing TableFormed to a real Kafka topic (servers found or started
by rummy_infra), then pairs until fewer than a table is left (or LIMIT_S passed). Reports tickets
seated per second, what the first pairing round seated and how long it took (one pass over the queue
plus its TableFormed appends), and the time of one pass alone. With spread ratings the last few
tickets wait for their windows to widen (the pairing policy), which sets the total time, not the pass.

The app is called in-process, as the servicer calls it once a token is verified: each ticket's caller
is the `Principal` an access token of a person with an account names (`play`, `watch`, kind human: rated
queues take people only), so no identity service is needed (the app issues no tokens either: a seated
player plays with their own).
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
from rummy_matchmaking.app import MatchmakingApp
from rummy_matchmaking.journal import Journal
from rummy_matchmaking.pairing import PairingRules, form_tables
from rummy_service.auth import HUMAN, PLAY, WATCH, Principal
from rummy_store.kafka_log import KafkaEventLog

MIN_PLAYERS = 3  # tables of 3-4; fewer than 3 left cannot form a table and end the run
LIMIT_S = 20.0  # or stop then: tails whose ratings are further apart than max_window never sit together


class QueueClock:
    """A microsecond per ticket while the queue fills (the whole queue arrives at once, in order,
    however long its appends take), then the wall clock, so pairing sees the same queue every run."""

    def __init__(self) -> None:
        self.started: float | None = None
        self._origin = time.time()
        self._calls = 0

    def __call__(self) -> float:
        if self.started is None:
            self._calls += 1
            return self._origin + self._calls * 1e-6
        return self._origin + time.time() - self.started


async def seat_queue(
    app: MatchmakingApp, clock: QueueClock, tickets: int, seed: int, rules: PairingRules
) -> dict[str, float]:
    await app.adopt(range(app.partitions), Journal())  # a new topic: every partition, nothing to fold
    rng = random.Random(seed)
    start = time.perf_counter()
    for i in range(tickets):
        player = f"bench-{i}"
        app.ratings[("kalooki", player)] = (5, rng.gauss(0.0, 10.0))
        await app.enqueue(
            Principal(player, frozenset({PLAY, WATCH}), HUMAN, player),
            mm.EnqueueRequest(variant="kalooki", min_players=3, max_players=4),
        )
    enqueue_s = time.perf_counter() - start
    clock.started = time.time()
    queued = [s.ticket for s in app.tickets.values()]
    start = time.perf_counter()
    form_tables(queued, clock(), {"kalooki": rules})
    pairing_s = time.perf_counter() - start
    start = time.perf_counter()
    await app.pair_once()
    first_s = time.perf_counter() - start
    first = sum(s.state == mm.TICKET_STATE_SEATED for s in app.tickets.values())
    rounds = 1
    total_s = first_s  # until the last table formed
    while sum(s.state == mm.TICKET_STATE_QUEUED for s in app.tickets.values()) >= MIN_PLAYERS:
        if time.perf_counter() - start > LIMIT_S:
            break
        await asyncio.sleep(0.05)  # waiting tickets widen their windows, as in the service's loop
        if await app.pair_once():
            total_s = time.perf_counter() - start
        rounds += 1
    seated = sum(s.state == mm.TICKET_STATE_SEATED for s in app.tickets.values())
    return {
        "seated": seated,
        "total_s": total_s,
        "pairing_s": pairing_s,
        "enqueue_s": enqueue_s,
        "first": first,
        "first_s": first_s,
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
            log = KafkaEventLog(kafka.address, topic, 3, writer=True)  # claims each partition on first use
            clock = QueueClock()
            app = MatchmakingApp(log, {"kalooki": rules}, clock=clock)
            print(f"matchmaking/{name}: seating {args.tickets} tickets ({kafka.origin})", file=sys.stderr)
            result = asyncio.run(seat_queue(app, clock, args.tickets, args.seed, rules))
            log.close()
            rate = result["seated"] / result["total_s"]
            print(
                f"matchmaking/{name}: {int(result['seated'])}/{args.tickets} tickets seated at"
                f" {int(result['tables'])} tables in {result['total_s']:.2f} s = {rate:.0f} tickets/s"
                f" ({int(result['rounds'])} pairing rounds; the first seated {int(result['first'])} in"
                f" {result['first_s'] * 1000:.0f} ms = {result['first'] / result['first_s']:.0f} tickets/s;"
                f" one pass over the full queue {result['pairing_s'] * 1000:.0f} ms;"
                " TableFormed written to Kafka by the partition's transactional writer, acks=all)"
            )
        print(
            f"matchmaking: enqueue, one caller after another, each ticket written to the topic before the"
            f" answer: {args.tickets / result['enqueue_s']:.0f} tickets/s"
        )


if __name__ == "__main__":
    main()
