"""The rules benchmark runs end to end, and the peers (when installed) agree with our solver."""

from __future__ import annotations

import random
import re
from typing import NoReturn

import pytest
from meldstream_benches import peers, rules
from meldstream_benches.peers import PeerMissing
from rummy_rules.cards import STANDARD_PACK, Card
from rummy_rules.events import DealEnded, GameEnded
from rummy_rules.solver import GIN, MeldSolver


def test_bench_prints_every_figure_without_peers(capsys: pytest.CaptureFixture[str]) -> None:
    assert rules.main(["--budget", "0.02", "--no-peers", "--variant", "kalooki"]) == 0
    captured = capsys.readouterr()
    report = captured.out
    for table in ("kalooki, 2 players", "kalooki, 4 players"):
        row = next(line for line in report.splitlines() if line.strip().startswith(table))
        games, decisions = (float(value.replace(",", "")) for value in row.split()[3:5])
        assert games > 0
        assert decisions > games
    assert re.search(r"kalooki, 2 players\s+[\d,]+ events/s", report)
    for jokers in (0, 1, 2):
        assert re.search(rf"kalooki 13 cards, {jokers} joker\(s\)\s+[\d,.]+ hands/s", report)
    assert re.search(r"gin rummy deadwood, 10 cards\s+[\d,.]+ hands/s", report)
    assert "[bench] solver: gin rummy 10 cards" in captured.err


def test_kept_games_played_again_are_the_games_timed() -> None:
    """The replay figure's games are played again from their seeds after the timed rounds."""
    tally = rules.Games("rummy500, 2 players")
    rules.play_ours(tally, "rummy500", 2, 0.05, 1)
    histories = rules.kept_histories(tally, "rummy500", 2)
    assert 0 < len(histories) == tally.games <= rules.KEPT_HISTORIES
    assert all(isinstance(history[-1], GameEnded) for history in histories)
    assert sum(isinstance(event, DealEnded) for history in histories for event in history) == tally.deals


def test_missing_peers_are_reported_and_skipped(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def missing(*_: object, **__: object) -> NoReturn:
        raise PeerMissing(f"open_spiel is not installed; {peers.INSTALL_HINT}")

    for name in (
        "openspiel_playouts",
        "rlcard_env_playouts",
        "rlcard_game_playouts",
        "openspiel_hands",
        "rlcard_hands",
    ):
        monkeypatch.setattr(peers, name, missing)
    assert rules.main(["--budget", "0.02", "--rounds", "1", "--variant", "kalooki"]) == 0
    captured = capsys.readouterr()
    assert captured.out.count("not measured") == 5
    assert "ours / peer" not in captured.out
    assert "not judged: no peer figures" in captured.out
    assert "requirements/bench.txt" in captured.err


def test_solve_all_cycles_only_when_asked() -> None:
    hands = [[Card(rank, STANDARD_PACK[0].suit)] for rank in (1, 2, 3)]
    once = peers.solve_all(lambda hand: hand[0].rank, hands, budget=10.0)
    assert once.values == (1, 2, 3)
    assert once.count == 3
    cycled = peers.solve_all(lambda hand: hand[0].rank, hands, budget=0.01, cycle=True)
    assert cycled.values == (1, 2, 3)
    assert cycled.count >= 3


def _gin_hands(count: int) -> list[list[Card]]:
    rng = random.Random(11)
    return [rng.sample(STANDARD_PACK, 10) for _ in range(count)]


def test_openspiel_min_deadwood_agrees_with_our_solver() -> None:
    pytest.importorskip("pyspiel", reason=f"open_spiel not installed ({peers.INSTALL_HINT})")
    hands = _gin_hands(500)
    theirs = peers.openspiel_min_deadwood(peers.openspiel_hands(hands), budget=10.0, cycle=False)
    ours = MeldSolver(GIN)
    assert list(theirs.values) == [ours.penalty(hand) for hand in hands]


def test_rlcard_meld_utilities_agree_with_our_solver() -> None:
    pytest.importorskip("rlcard", reason=f"rlcard not installed ({peers.INSTALL_HINT})")
    hands = _gin_hands(200)
    theirs = peers.rlcard_deadwood(peers.rlcard_hands(hands), budget=10.0, cycle=False)
    ours = MeldSolver(GIN)
    assert list(theirs.values) == [ours.penalty(hand) for hand in hands]


def test_peer_playouts_count_decisions() -> None:
    pytest.importorskip("pyspiel", reason=f"open_spiel not installed ({peers.INSTALL_HINT})")
    pytest.importorskip("rlcard", reason=f"rlcard not installed ({peers.INSTALL_HINT})")
    played, histories = peers.openspiel_playouts(0.05, seed=1)
    assert played.games == len(histories) >= 1
    assert played.decisions > played.games
    actions, _ = peers.openspiel_replay(histories)
    assert actions == sum(len(history) for history in histories)
    for measured in (peers.rlcard_game_playouts(0.05, seed=1), peers.rlcard_env_playouts(0.05, seed=1)):
        assert measured.games >= 1
        assert measured.decisions > measured.games
