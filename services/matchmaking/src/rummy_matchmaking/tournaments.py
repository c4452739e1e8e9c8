"""Tournaments as pure state: registration, the tables of each round, and what the next round is.

Formats: `series` (the same tables play `rounds` matches; standings add the totals) and `rotation`
(contract rummy with 8+ players, §3.14 D19): seats are drawn with the rules engine's `form_tables`, and
after each round every table's closer moves to the next table (`rotate_tables`; a table without a
closer sends its lowest scorer of the round). Here a tournament round is one engine game per table.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy_rules.errors import RuleViolation
from rummy_rules.tables import form_tables, rotate_tables

SERIES = mm.TOURNAMENT_FORMAT_SERIES
ROTATION = mm.TOURNAMENT_FORMAT_ROTATION


class TournamentError(ValueError):
    """A tournament request that cannot be honoured (the state is unchanged)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass(slots=True)
class Table:
    round: int
    number: int
    game_id: str
    players: tuple[str, ...]
    result: sc.MatchScored | None = None


@dataclass(slots=True)
class Tournament:
    tournament_id: str
    variant: str
    format: int
    rounds: int
    table_size: int
    options: dict[str, int | bool | str]
    seed: bytes
    players: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    round: int = 0

    @property
    def finished(self) -> bool:
        return self.round == self.rounds and all(t.result is not None for t in self.current())

    def current(self) -> list[Table]:
        return [t for t in self.tables if t.round == self.round]

    def register(self, player: str) -> int:
        if self.round:
            raise TournamentError("tournament_started", "registration is closed")
        if player in self.players:
            raise TournamentError("already_registered", f"{player} is registered")
        self.players.append(player)
        return len(self.players)

    def start(self) -> list[Table]:
        if self.round:
            raise TournamentError("tournament_started", "the tournament has started")
        if self.format == ROTATION:
            if self.variant != "contract":
                raise TournamentError("bad_format", "table rotation is contract rummy's multi-table rule")
            try:  # contract §3.14.1 D19: ceil(N/4) tables of 3-4, seats drawn from the seed
                seating = form_tables(self.players, self.seed)
            except RuleViolation as exc:
                raise TournamentError(exc.code, exc.message) from None
            if len(seating) < 2:
                raise TournamentError("too_few_players", "rotation needs 8 or more players (contract D19)")
        else:
            size = self.table_size
            if size < 2 or len(self.players) < size or len(self.players) % size:
                raise TournamentError(
                    "bad_player_count", f"{len(self.players)} players do not fill tables of {size}"
                )
            seating = tuple(tuple(self.players[i : i + size]) for i in range(0, len(self.players), size))
        return self._open_round(1, [list(t) for t in seating])

    def _open_round(self, number: int, seating: list[list[str]]) -> list[Table]:
        self.round = number
        new = [
            Table(number, index + 1, f"{self.tournament_id}-r{number}-t{index + 1}", tuple(players))
            for index, players in enumerate(seating)
        ]
        self.tables.extend(new)
        return new

    def record(self, game_id: str, match: sc.MatchScored) -> list[Table]:
        """Take a game's result; returns the next round's tables once the whole round is over."""
        table = next((t for t in self.tables if t.game_id == game_id), None)
        if table is None or table.result is not None:
            return []  # not ours, or a redelivered result
        table.result = match
        if table.round != self.round or not all(t.result is not None for t in self.current()):
            return []
        if self.round == self.rounds:
            return []
        current = self.current()
        if self.format != ROTATION:
            return self._open_round(self.round + 1, [list(t.players) for t in current])
        seating = {t.number: list(t.players) for t in current}
        closers: dict[int, str | None] = {}
        scores: dict[str, int] = {}
        dealers: dict[int, int] = {}
        for t in current:
            assert t.result is not None
            closers[t.number] = t.result.closer or None
            scores.update(zip(t.result.player_ids, t.result.last_deal_penalties, strict=True))
            dealers[t.number] = t.result.last_dealer
        moved = rotate_tables(seating, closers, scores, dealers)  # contract §3.14.3 D19
        return self._open_round(self.round + 1, [moved[n] for n in sorted(moved)])

    def standings(self) -> list[tuple[str, int]]:
        points = {p: 0 for p in self.players}
        for t in self.tables:
            if t.result is not None:
                for player, total in zip(t.result.player_ids, t.result.totals, strict=True):
                    points[player] += total
        higher = self.variant == "rummy500"
        return sorted(points.items(), key=lambda item: (-item[1] if higher else item[1], item[0]))
