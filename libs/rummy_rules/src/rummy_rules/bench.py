"""`python -m rummy_rules.bench` (`make bench-rules`): engine and solver throughput beside the peers.

One run measures, on the same machine and with the same inputs where inputs exist:

* random-legal complete games per second, decisions per second and decisions per game, for each
  playable variant at 2 and 4 players (a decision = one `legal_actions` query + one applied command,
  `decide` then `evolve`); OpenSpiel's `gin_rummy` and RLCard's `gin-rummy` the same way;
* events per second for `replay` (OpenSpiel: actions per second re-applying a game's history);
* solver hands per second: 13-card Kalooki hands with 0, 1 and 2 jokers, and 10-card gin-rummy
  deadwood hands, the latter also through OpenSpiel's `min_deadwood` and RLCard's meld utilities on
  the very same hands, with a check that all three agree on every hand.

The machine is shared and noisy: read the ratios (ours / peer), not the absolute figures.
Progress goes to stderr, the report to stdout.
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
from dataclasses import dataclass
from importlib import metadata

from rummy_rules import peers
from rummy_rules.bots import random_legal
from rummy_rules.cards import JOKER, STANDARD_PACK, Card
from rummy_rules.events import DealEnded, Event
from rummy_rules.game import replay
from rummy_rules.peers import PeerMissing, Playouts, Solved
from rummy_rules.simulate import simulate
from rummy_rules.solver import GIN, KALOOKI, MeldSolver
from rummy_rules.variants import PLAYABLE_VARIANTS

TABLE_SIZES = (2, 4)
MAX_DECISIONS = 20_000  # a random-legal game still running then is stopped and counted unfinished
KEPT_HISTORIES = 400  # finished games kept for the replay figure
GIN_HANDS = 50_000  # distinct gin hands, solved by all three solvers and compared


def progress(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


@dataclass(frozen=True, slots=True)
class GamesFigure:
    """Our random-legal games at one table: the playouts, unfinished games, kept histories."""

    label: str
    playouts: Playouts
    deals: int
    unfinished: int
    histories: tuple[tuple[Event, ...], ...]


def measure_games(variant: str, players: int, budget: float, seed: int) -> GamesFigure:
    """Random-legal games back to back until `budget` seconds are spent."""
    games = decisions = deals = unfinished = 0
    histories: list[tuple[Event, ...]] = []
    began = time.perf_counter()
    index = 0
    while time.perf_counter() - began < budget:
        game_seed = hashlib.sha256(f"bench/{seed}/{variant}/{players}/{index}".encode()).digest()
        result = simulate(variant, players, game_seed, random_legal, max_decisions=MAX_DECISIONS)
        decisions += result.decisions
        if result.finished:
            games += 1
            deals += sum(1 for event in result.events if isinstance(event, DealEnded))
            if len(histories) < KEPT_HISTORIES:
                histories.append(result.events)
        else:
            unfinished += 1
        index += 1
    seconds = time.perf_counter() - began
    return GamesFigure(
        f"{variant}, {players} players",
        Playouts(games, decisions, seconds),
        deals,
        unfinished,
        tuple(histories),
    )


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


def peer(name: str, measure: Callable[[], object]) -> object | None:
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
    parser = argparse.ArgumentParser(prog="python -m rummy_rules.bench", description=__doc__.split("\n")[0])
    parser.add_argument("--budget", type=float, default=2.0, help="seconds per measurement (default 2)")
    parser.add_argument("--seed", type=int, default=1, help="seed of games and hands (default 1)")
    parser.add_argument("--no-peers", action="store_true", help="measure meldstream only")
    parser.add_argument(
        "--variant",
        action="append",
        choices=PLAYABLE_VARIANTS,
        help="measure games of this variant only (repeatable; default: every playable variant)",
    )
    args = parser.parse_args(argv)
    budget: float = args.budget
    seed: int = args.seed
    out: list[str] = []
    say = out.append

    say("meldstream rules benchmark")
    say(f"  python {platform.python_version()}, {os.cpu_count()} CPUs, seed {seed}, {budget:g} s per figure")
    say(f"  peers: {versions() if not args.no_peers else 'not measured (--no-peers)'}")
    say("  shared, noisy machine: compare the ratios, not the absolute figures")

    # -- game play -------------------------------------------------------------------------------
    figures: list[GamesFigure] = []
    for variant in args.variant or PLAYABLE_VARIANTS:
        for players in TABLE_SIZES:
            progress(f"random-legal games: {variant}, {players} players")
            figures.append(measure_games(variant, players, budget, seed))
    os_play: Playouts | None = None
    os_histories: list[list[int]] = []
    rl_env: Playouts | None = None
    rl_game: Playouts | None = None
    if not args.no_peers:
        measured = peer("OpenSpiel gin_rummy playouts", lambda: peers.openspiel_playouts(budget, seed))
        if isinstance(measured, tuple):
            os_play, os_histories = measured
        rl_env = _playouts(
            peer("RLCard gin-rummy env playouts", lambda: peers.rlcard_env_playouts(budget, seed))
        )
        rl_game = _playouts(
            peer("RLCard gin-rummy game playouts", lambda: peers.rlcard_game_playouts(budget, seed))
        )

    say("")
    say("Random-legal complete games (decision = legal-actions query + applied action)")
    say(f"  {'':34} {'games/s':>9} {'decisions/s':>12} {'decisions/game':>15} {'deals/game':>11}")
    for figure in figures:
        play = figure.playouts
        note = (
            f"  ({figure.unfinished} unfinished at {MAX_DECISIONS:,} decisions)" if figure.unfinished else ""
        )
        per_deal = f"{figure.deals / play.games:>11.1f}" if play.games else f"{'':>11}"
        say(f"  {figure.label:34} {_game_columns(play)} {per_deal}{note}")
    peers_played = [
        (name, short, measured)
        for name, short, measured in (
            ("OpenSpiel gin_rummy (C++ core)", "OpenSpiel", os_play),
            ("RLCard gin-rummy env loop", "RLCard env", rl_env),
            ("RLCard gin-rummy game loop", "RLCard game", rl_game),
        )
        if measured is not None
    ]
    for name, _, measured in peers_played:
        say(f"  {name:34} {_game_columns(measured)} {1.0:>11.1f}")
    if peers_played:
        say("  decisions/s, ours / peer:")
        for figure in figures:
            ours = rate(figure.playouts.decisions, figure.playouts.seconds)
            cells = ", ".join(
                f"{short} {ratio(ours, rate(measured.decisions, measured.seconds))}"
                for _, short, measured in peers_played
            )
            say(f"    {figure.label:32} {cells}")

    # -- replay ----------------------------------------------------------------------------------
    say("")
    say("Replay (whole finished games folded from their events)")
    replays: list[tuple[str, float]] = []
    for figure in figures:
        progress(f"replay: {figure.label}")
        events, seconds = measure_replay(figure.histories)
        replays.append((figure.label, rate(events, seconds)))
        say(f"  {figure.label:34} {fmt(rate(events, seconds)):>12} events/s  ({len(figure.histories)} games)")
    if os_histories:
        progress("peer: OpenSpiel history replay")
        actions, seconds = peers.openspiel_replay(os_histories)
        theirs = rate(actions, seconds)
        say(f"  {'OpenSpiel gin_rummy history':34} {fmt(theirs):>12} actions/s")
        say(
            "  events/s, ours / OpenSpiel actions/s: "
            + ", ".join(f"{label} {ratio(ours, theirs)}" for label, ours in replays)
        )

    # -- solver ----------------------------------------------------------------------------------
    say("")
    say("Meld solver (exact least penalty; a fresh solver per figure, so its cache warm-up is counted)")
    rng = random.Random(seed)
    for jokers in (0, 1, 2):
        progress(f"solver: kalooki 13 cards, {jokers} jokers")
        # Distinct hands, never cycled: the solver caches results per hand.
        hands = kalooki_hands(jokers, int(budget * 30_000), rng)
        mixed = peers.solve_all(MeldSolver(KALOOKI).penalty, hands, budget)
        label = f"kalooki 13 cards, {jokers} joker(s)"
        say(f"  {label:34} {fmt(rate(mixed.count, mixed.seconds)):>12} hands/s")
    progress("solver: gin rummy 10 cards")
    # Hands without jokers or repeats are never cached per hand, so all three solvers cycle them.
    hands = gin_hands(GIN_HANDS, rng)
    gin = peers.solve_all(MeldSolver(GIN).penalty, hands, budget, cycle=True)
    gin_rate = rate(gin.count, gin.seconds)
    say(f"  {'gin rummy deadwood, 10 cards':34} {fmt(gin_rate):>12} hands/s")
    if not args.no_peers:
        for name, other in (
            (
                "OpenSpiel min_deadwood (C++)",
                peer("OpenSpiel min_deadwood", lambda: _openspiel_solved(hands, budget)),
            ),
            ("RLCard meld utilities", peer("RLCard melding", lambda: _rlcard_solved(hands, budget))),
        ):
            if not isinstance(other, Solved):
                say(f"  {name:34} not measured ({peers.INSTALL_HINT})")
                continue
            theirs = rate(other.count, other.seconds)
            common = min(len(other.values), len(gin.values))
            same = sum(1 for a, b in zip(gin.values, other.values, strict=False) if a == b)
            say(
                f"  {name:34} {fmt(theirs):>12} hands/s   ours / peer {ratio(gin_rate, theirs)}"
                f"   same deadwood on {same:,} of {common:,} hands"
            )
    print("\n".join(out))
    return 0


def _playouts(measured: object) -> Playouts | None:
    return measured if isinstance(measured, Playouts) else None


def _game_columns(play: Playouts) -> str:
    per_game = play.decisions / play.games if play.games else 0.0
    games, decisions = rate(play.games, play.seconds), rate(play.decisions, play.seconds)
    return f"{fmt(games):>9} {fmt(decisions):>12} {fmt(per_game):>15}"


def _openspiel_solved(hands: list[list[Card]], budget: float) -> Solved:
    return peers.openspiel_min_deadwood(peers.openspiel_hands(hands), budget)


def _rlcard_solved(hands: list[list[Card]], budget: float) -> Solved:
    return peers.rlcard_deadwood(peers.rlcard_hands(hands), budget)


if __name__ == "__main__":
    sys.exit(main())
