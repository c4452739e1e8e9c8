"""Tournaments as pure state: registration, the tables of each round, and what the next round is.

Formats: `series` (the same tables play `rounds` matches; standings add the totals) and `rotation`
(contract rummy with 8+ players, §3.14 D19): seats are drawn with the rules engine's `form_tables`;
tournament round k is one engine game per table that plays contract round k alone (the rules'
`first_round`/`last_round` options), and after it every table's closer moves to the next table
(`rotate_tables`; a table without a closer sends its lowest scorer of the round) before round k+1's
tables are formed. Standings add each player's results (a rotation: the round penalties; lowest wins).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy_rules.errors import RuleViolation
from rummy_rules.tables import form_tables, next_dealer_seat, rotate_tables
from rummy_rules.variant import variant_named

SERIES = mm.TOURNAMENT_FORMAT_SERIES
ROTATION = mm.TOURNAMENT_FORMAT_ROTATION
CONTRACT_ROUNDS = 8  # contract §3.4: eight contracts, one per round
Option = int | bool | str


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
    dealer: int | None = None  # the dealer's seat, when the rules fix it (rotation rounds after the 1st)
    result: sc.MatchScored | None = None


@dataclass(slots=True)
class Tournament:
    tournament_id: str
    variant: str
    format: int
    rounds: int
    table_size: int
    options: dict[str, Option]
    seed: bytes
    players: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    round: int = 0
    names: dict[str, str] = field(default_factory=dict)  # display names, as registered

    @property
    def finished(self) -> bool:
        return self.round == self.rounds and all(t.result is not None for t in self.current())

    def current(self) -> list[Table]:
        return [t for t in self.tables if t.round == self.round]

    def check_register(self, player: str) -> None:
        if self.round:
            raise TournamentError("tournament_started", "registration is closed")
        if player in self.players:
            raise TournamentError("already_registered", f"{player} is registered")

    def register(self, player: str, name: str = "") -> int:
        self.check_register(player)
        self.players.append(player)
        self.names[player] = name
        return len(self.players)

    def options_for(self, table: Table) -> dict[str, Option]:
        """The game options of one table: a rotation round plays its own contract alone (§3.14.2)."""
        if self.format != ROTATION:
            return dict(self.options)
        options = {**self.options, "first_round": table.round, "last_round": table.round}
        if table.dealer is not None:
            options["first_dealer"] = table.dealer
        return options

    def start(self) -> list[Table]:
        return self._open_round(1, [list(t) for t in self.first_seating()])

    def first_seating(self) -> tuple[tuple[str, ...], ...]:
        """The first round's seats (refused if the tournament cannot start); changes nothing."""
        if self.round:
            raise TournamentError("tournament_started", "the tournament has started")
        if self.format == ROTATION:
            if not variant_named(self.variant).table_rotation:
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
        return seating

    def _open_round(
        self, number: int, seating: list[list[str]], dealers: Sequence[int | None] | None = None
    ) -> list[Table]:
        self.round = number
        dealers = dealers or [None] * len(seating)
        new = [
            Table(number, index + 1, f"{self.tournament_id}-r{number}-t{index + 1}", tuple(players), dealer)
            for index, (players, dealer) in enumerate(zip(seating, dealers, strict=True))
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
        # contract §3.14.4: the deal passes to the seat left of the table's last dealer, whoever sits there
        following = [next_dealer_seat(dealers[n], len(moved[n])) for n in sorted(moved)]
        return self._open_round(self.round + 1, [moved[n] for n in sorted(moved)], following)

    def standings(self) -> list[tuple[str, int]]:
        points = {p: 0 for p in self.players}
        for t in self.tables:
            if t.result is not None:
                for player, total in zip(t.result.player_ids, t.result.totals, strict=True):
                    points[player] += total
        higher = variant_named(self.variant).higher_is_better
        return sorted(points.items(), key=lambda item: (-item[1] if higher else item[1], item[0]))
