"""`python -m meldstream_benches.rules` (`make bench-rules`): engine and solver throughput beside the peers.

One run measures, on the same machine and with the same inputs where inputs exist:

* random-legal complete games per second, decisions per second and decisions per game, for each
  playable variant at 2 and 4 players (a decision = one `legal_actions` query + one applied command,
  `decide` then `evolve`); OpenSpiel's `gin_rummy` and RLCard's `gin-rummy` the same way;
* events per second for `replay` (OpenSpiel: actions per second re-applying a game's history);
* solver hands per second: 13-card Kalooki hands with 0, 1 and 2 jokers, and 10-card gin-rummy
  deadwood hands, the latter also through OpenSpiel's `min_deadwood` and RLCard's meld utilities on
  the very same hands, with a check that all three agree on every hand.

The machine is shared and noisy, so compared figures are measured in interleaved rounds (ours,
then each peer, again and again) and summed: a burst of load then hits both sides alike. Read the
ratios (ours / peer), not the absolute figures. Progress goes to stderr, the report to stdout.

Our games kept for the replay figure are kept as seeds and played again after the timed rounds
(a seeded game is deterministic): hundreds of kept games' events in the heap during the rounds
made each full garbage collection walk them, charged to whichever table was playing then, a cost
of this benchmark's bookkeeping that the peers, keeping lists of ints, do not pay.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib import metadata
from typing import Any, TypeVar

from rummy_rules.bots import random_legal
from rummy_rules.cards import JOKER, STANDARD_PACK, Card
from rummy_rules.events import DealEnded, Event
from rummy_rules.game import replay
from rummy_rules.simulate import simulate
from rummy_rules.solver import GIN, KALOOKI, MeldSolver
from rummy_rules.variants import PLAYABLE_VARIANTS, variant_named

from meldstream_benches import peers
from meldstream_benches.peers import PeerMissing

T = TypeVar("T")
TABLE_SIZES = (2, 4)
MAX_DECISIONS = 20_000  # a random-legal game still running then is stopped and counted unfinished
KEPT_HISTORIES = 400  # finished games kept for the replay figure
GIN_HANDS = 50_000  # distinct gin hands, solved by all three solvers and compared


def progress(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


@dataclass(slots=True)
class Games:
    """Random-legal playouts of one table, summed over rounds; `missing` if the peer is absent."""

    label: str
    games: int = 0
    decisions: int = 0
    finished_decisions: int = 0  # decisions in finished games, for decisions per game
    seconds: float = 0.0
    deals: int = 0
    unfinished: int = 0
    histories: list[Any] = field(default_factory=list)  # a peer's kept games, as it returns them
    kept: list[bytes] = field(default_factory=list)  # our kept games' seeds (`kept_histories`)
    missing: str | None = None

    @property
    def decisions_per_second(self) -> float:
        return rate(self.decisions, self.seconds)


@dataclass(slots=True)
class Hands:
    """Hands solved by one solver, summed over rounds; `values` from its first pass, in order."""

    label: str
    count: int = 0
    seconds: float = 0.0
    values: tuple[int, ...] = ()
    missing: str | None = None

    @property
    def per_second(self) -> float:
        return rate(self.count, self.seconds)


def play_ours(tally: Games, variant: str, players: int, budget: float, seed: int) -> None:
    """Random-legal games back to back until `budget` seconds are spent, added to `tally`."""
    began = time.perf_counter()
    while time.perf_counter() - began < budget:
        index = tally.games + tally.unfinished
        game_seed = hashlib.sha256(f"bench/{seed}/{variant}/{players}/{index}".encode()).digest()
        result = simulate(variant, players, game_seed, random_legal, max_decisions=MAX_DECISIONS)
        tally.decisions += result.decisions
        if result.finished:
            tally.games += 1
            tally.finished_decisions += result.decisions
            tally.deals += sum(1 for event in result.events if isinstance(event, DealEnded))
            if len(tally.kept) < KEPT_HISTORIES:
                tally.kept.append(game_seed)
        else:
            tally.unfinished += 1
    tally.seconds += time.perf_counter() - began


def play_peer(tally: Games, measure: Callable[[], Any]) -> None:
    """One round of a peer's playouts, added to `tally`; a missing package is noted once."""
    if tally.missing is not None:
        return
    try:
        measured = measure()
    except PeerMissing as exc:
        tally.missing = str(exc)
        progress(f"skipped {tally.label}: {exc}")
        return
    played, histories = measured if isinstance(measured, tuple) else (measured, [])
    tally.games += played.games
    tally.decisions += played.decisions
    tally.finished_decisions += played.decisions
    tally.deals += played.games
    tally.seconds += played.seconds
    tally.histories.extend(histories[: KEPT_HISTORIES - len(tally.histories)])


def solve_round(tally: Hands, measure: Callable[[], peers.Solved]) -> None:
    if tally.missing is not None:
        return
    try:
        solved = measure()
    except PeerMissing as exc:
        tally.missing = str(exc)
        progress(f"skipped {tally.label}: {exc}")
        return
    if not tally.values:
        tally.values = solved.values
    tally.count += solved.count
    tally.seconds += solved.seconds


def kept_histories(tally: Games, variant: str, players: int) -> list[tuple[Event, ...]]:
    """Our kept games' event histories, played again from their seeds (after the timed rounds)."""
    return [
        simulate(variant, players, seed, random_legal, max_decisions=MAX_DECISIONS).events
        for seed in tally.kept
    ]


def measure_replay(histories: Sequence[Sequence[Event]]) -> tuple[int, float]:
    """Events folded by `replay` over whole game histories, and the seconds it took."""
    events = 0
    began = time.perf_counter()
    for history in histories:
        replay(history)
        events += len(history)
    return events, time.perf_counter() - began


def kalooki_hands(jokers: int, count: int, rng: random.Random) -> list[list[Card]]:
    """13-card hands from Kalooki's two packs, with exactly `jokers` jokers."""
    naturals = STANDARD_PACK * 2
    return [[*rng.sample(naturals, 13 - jokers), *(JOKER,) * jokers] for _ in range(count)]


def gin_hands(count: int, rng: random.Random) -> list[list[Card]]:
    """10-card hands from one 52-card pack (gin rummy's deal)."""
    return [rng.sample(STANDARD_PACK, 10) for _ in range(count)]


def rate(count: float, seconds: float) -> float:
    return count / seconds if seconds > 0 else 0.0


def fmt(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def ratio(ours: float, theirs: float) -> str:
    return f"{ours / theirs:.2f}x" if theirs > 0 else "n/a"


def peer(name: str, measure: Callable[[], T]) -> T | None:
    """Run one peer measurement; a missing package is reported and skipped."""
    progress(f"peer: {name}")
    try:
        return measure()
    except PeerMissing as exc:
        progress(f"skipped {name}: {exc}")
        return None


def versions() -> str:
    found = []
    for package in ("open_spiel", "rlcard"):
        try:
            found.append(f"{package} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            found.append(f"{package} missing ({peers.INSTALL_HINT})")
    return ", ".join(found)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m meldstream_benches.rules", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--budget", type=float, default=2.0, help="seconds per figure (default 2)")
    parser.add_argument(
        "--rounds", type=int, default=4, help="interleaved rounds per compared figure (default 4)"
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of games and hands (default 1)")
    parser.add_argument("--no-peers", action="store_true", help="measure meldstream only")
    parser.add_argument(
        "--variant",
        action="append",
        choices=PLAYABLE_VARIANTS,
        help="measure games of this variant only (repeatable; default: every playable variant)",
    )
    parser.add_argument(
        "--all-sizes",
        action="store_true",
        help="every table size each variant seats with its default options (default: 2 and 4 players)",
    )
    args = parser.parse_args(argv)
    budget: float = args.budget
    rounds: int = max(1, args.rounds)
    seed: int = args.seed
    out: list[str] = []
    say = out.append

    say("meldstream rules benchmark")
    say(f"  python {platform.python_version()}, {os.cpu_count()} CPUs, seed {seed}, {budget:g} s per figure")
    say(f"  peers: {versions() if not args.no_peers else 'not measured (--no-peers)'}")
    say(f"  shared, noisy machine: figures side by side are taken in {rounds} interleaved rounds;")
    say("  compare the ratios, not the absolute figures")

    say("")
    say("Random-legal complete games (decision = legal-actions query + applied action)")
    ours = [
        (Games(f"{variant}, {players} players"), variant, players)
        for variant in args.variant or PLAYABLE_VARIANTS
        for players in (variant_named(variant).players if args.all_sizes else TABLE_SIZES)
    ]
    theirs = (
        []
        if args.no_peers
        else [
            (Games("OpenSpiel gin_rummy (C++ core)"), "OpenSpiel", peers.openspiel_playouts),
            (Games("RLCard gin-rummy env loop"), "RLCard env", peers.rlcard_env_playouts),
            (Games("RLCard gin-rummy game loop"), "RLCard game", peers.rlcard_game_playouts),
        ]
    )
    share = budget / rounds
    for round_index in range(rounds):
        progress(f"games, round {round_index + 1} of {rounds}")
        for tally, variant, players in ours:
            play_ours(tally, variant, players, share, seed)
        for tally, _, playouts in theirs:
            play_peer(tally, partial(playouts, share, seed + round_index))
    say(f"  {'':34} {'games/s':>9} {'decisions/s':>12} {'decisions/game':>15} {'deals/game':>11}")
    for tally, _, _ in ours:
        note = f"  ({tally.unfinished} unfinished at {MAX_DECISIONS:,} decisions)" if tally.unfinished else ""
        say(f"  {tally.label:34} {_game_columns(tally)}{note}")
    present = [(tally, short) for tally, short, _ in theirs if tally.missing is None]
    for tally, _, _ in theirs:
        say(f"  {tally.label:34} " + (_game_columns(tally) if tally.missing is None else "not measured"))
    if present:
        say("  decisions/s, ours / peer:")
        for tally, _, _ in ours:
            cells = ", ".join(
                f"{short} {ratio(tally.decisions_per_second, other.decisions_per_second)}"
                for other, short in present
            )
            say(f"    {tally.label:32} {cells}")

    say("")
    say("Replay (whole finished games folded from their events)")
    replays: list[tuple[str, float]] = []
    for tally, variant, players in ours:
        progress(f"replay: {tally.label} (playing its {len(tally.kept)} kept games again)")
        histories = kept_histories(tally, variant, players)
        events, seconds = measure_replay(histories)
        replays.append((tally.label, rate(events, seconds)))
        say(f"  {tally.label:34} {fmt(rate(events, seconds)):>12} events/s  ({len(histories)} games)")
    spiel = theirs[0][0] if theirs else None
    if spiel is not None and spiel.histories:
        progress("peer: OpenSpiel history replay")
        actions, seconds = peers.openspiel_replay(spiel.histories)
        other_rate = rate(actions, seconds)
        games = len(spiel.histories)
        say(f"  {'OpenSpiel gin_rummy history':34} {fmt(other_rate):>12} actions/s  ({games} games)")
        cells = ", ".join(f"{label} {ratio(value, other_rate)}" for label, value in replays)
        say(f"  ours / OpenSpiel: {cells}")

    say("")
    say("Meld solver (exact least penalty; a fresh solver per figure, so its cache warm-up is counted)")
    rng = random.Random(seed)
    # Distinct hands, never cycled (the solver caches results per hand), taken in rounds too.
    kalooki = [
        (Hands(f"kalooki 13 cards, {jokers} joker(s)"), kalooki_hands(jokers, int(budget * 40_000), rng))
        for jokers in (0, 1, 2)
    ]
    solvers = [MeldSolver(KALOOKI) for _ in kalooki]
    for round_index in range(rounds):
        progress(f"solver: kalooki 13 cards, round {round_index + 1} of {rounds}")
        for (entry, pile), kalooki_solver in zip(kalooki, solvers, strict=True):
            solve_round(entry, partial(peers.solve_all, kalooki_solver.penalty, pile[entry.count :], share))
    for entry, _ in kalooki:
        say(f"  {entry.label:34} {fmt(entry.per_second):>12} hands/s")
    # Gin hands have no jokers or repeats, so nothing is cached per hand: every solver cycles them.
    hands = gin_hands(GIN_HANDS, rng)
    gin = Hands("gin rummy deadwood, 10 cards")
    solver = MeldSolver(GIN)
    entries: list[Hands] = []
    others: list[tuple[Hands, Callable[..., peers.Solved]]] = []
    if not args.no_peers:
        for entry, convert, solve in (
            (Hands("OpenSpiel min_deadwood (C++)"), peers.openspiel_hands, peers.openspiel_min_deadwood),
            (Hands("RLCard meld utilities"), peers.rlcard_hands, peers.rlcard_deadwood),
        ):
            entries.append(entry)
            converted = peer(f"{entry.label}: converting hands", partial(convert, hands))
            if converted is None:
                entry.missing = peers.INSTALL_HINT
            else:
                others.append((entry, partial(solve, converted)))
    for round_index in range(rounds):
        progress(f"solver: gin rummy 10 cards, round {round_index + 1} of {rounds}")
        solve_round(gin, partial(peers.solve_all, solver.penalty, hands, share, cycle=True))
        for entry, measure in others:
            solve_round(entry, partial(measure, share))
    say(f"  {gin.label:34} {fmt(gin.per_second):>12} hands/s")
    for entry in entries:
        if entry.missing is not None:
            say(f"  {entry.label:34} not measured ({peers.INSTALL_HINT})")
            continue
        common = min(len(entry.values), len(gin.values))
        same = sum(1 for a, b in zip(gin.values, entry.values, strict=False) if a == b)
        versus = ratio(gin.per_second, entry.per_second)
        say(
            f"  {entry.label:34} {fmt(entry.per_second):>12} hands/s   ours / peer {versus}"
            f"   same deadwood on {same:,} of {common:,} hands"
        )
    say("")
    say("Targets (issue 2)")
    judged = False
    spiel_games = theirs[0][0] if theirs and theirs[0][0].missing is None else None
    if spiel_games is not None and spiel_games.decisions_per_second:
        times = min(tally.decisions_per_second for tally, _, _ in ours) / spiel_games.decisions_per_second
        verdict = "met" if times >= 1 else "not met"
        say(f"  decisions/s at least OpenSpiel gin_rummy's: slowest table at {times:.2f}x -> {verdict}")
        judged = True
    rlcard_hands = next((entry for entry in entries if entry.label.startswith("RLCard")), None)
    if rlcard_hands is not None and rlcard_hands.missing is None and rlcard_hands.per_second:
        times = gin.per_second / rlcard_hands.per_second
        verdict = "met" if times >= 3 else ("ahead, short of 3x" if times > 1 else "not met")
        say(f"  gin solver ahead of RLCard's meld utilities, aiming at 3x: {times:.2f}x -> {verdict}")
        judged = True
    if not judged:
        say("  not judged: no peer figures")
    print("\n".join(out))
    return 0


def _game_columns(tally: Games) -> str:
    per_game = tally.finished_decisions / tally.games if tally.games else 0.0
    per_deal = tally.deals / tally.games if tally.games else 0.0
    games, decisions = rate(tally.games, tally.seconds), rate(tally.decisions, tally.seconds)
    return f"{fmt(games):>9} {fmt(decisions):>12} {fmt(per_game):>15} {per_deal:>11.1f}"


if __name__ == "__main__":
    sys.exit(main())
