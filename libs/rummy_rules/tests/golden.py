"""Golden playthroughs: seeded games of every variant and table size, decision by decision.

For each table (`TABLES`) two games are played from fixed seeds: one by the greedy bots to its end
(deals, reshuffles, buying, match end) and one by uniformly random choices for its first
`RANDOM_DECISIONS` decisions (the odd moves greedy play never makes). Each decision is written as
one line, `seat chosen/legal digest  command -> events`, where the digest covers the legal actions
in order, the chosen action, the events it caused and the resulting state, and the command and its
events follow in words (`Discard seat=0 card=7H -> CardDiscarded seat=0 card=7H`), so a diff of a
file says what changed in play; the state stays in the digest. The first `FULL_DECISIONS` decisions of each
2-player greedy game and the first decision that ends a deal are also written in full, as JSON
(`serialize.to_dict`), so a reader sees what the digests stand for.

`test_golden.py` replays every game and compares it line by line with the files in `golden/`:
a refactor of the rules must leave them byte-identical. After an intended change of behaviour,
rewrite them and review the diff:

    .venv/bin/python libs/rummy_rules/tests/golden.py
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Final

from rummy_rules.bots import greedy, random_legal
from rummy_rules.cards import Card
from rummy_rules.commands import Command
from rummy_rules.events import DealEnded, Event, OptionValue
from rummy_rules.game import buyers, decide, evolve, legal_actions, start
from rummy_rules.melds import Meld
from rummy_rules.seat_view import Bot, SeatView
from rummy_rules.serialize import to_dict
from rummy_rules.simulate import bot_rng
from rummy_rules.state import GameState, Phase, others_may_act
from rummy_rules.variants import VARIANTS, variant_named

GOLDEN: Final = Path(__file__).parent / "golden"
RANDOM_DECISIONS: Final = 150
FULL_DECISIONS: Final = 6


@dataclass(frozen=True, slots=True)
class Table:
    variant: str
    players: int
    options: tuple[tuple[str, OptionValue], ...] = ()

    @property
    def name(self) -> str:
        extra = "".join(f"-{key}={value}" for key, value in self.options)
        return f"{self.variant}-{self.players}p{extra}"


# Every table size each variant seats with its default options (`Variant.players`), and the sizes
# only an option seats: rummy500's 7 and 8 with two packs.
TABLES: Final = (
    *(Table(variant, players) for variant in VARIANTS for players in variant_named(variant).players),
    *(Table("rummy500", players, (("packs", 2),)) for players in (7, 8)),
)


def _seed(table: Table, game: str) -> bytes:
    return hashlib.sha256(f"golden/{table.name}/{game}".encode()).digest()


def _digest(actions: Sequence[Command], chosen: int, events: Sequence[Event], state: GameState) -> str:
    # repr is exact for these frozen values and several times cheaper than to_dict; the rules
    # (fixed per game) are left out of the state and written once in the game's header.
    text = repr((actions, chosen, events, tuple(state)[1:]))
    return hashlib.blake2b(text.encode(), digest_size=6).hexdigest()


def _text(value: Any) -> str:
    """A command's or an event's fields in short words: cards by code, card lists in brackets."""
    if isinstance(value, Card):
        return value.text
    if isinstance(value, Meld):
        return f"[{value}]"
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, tuple | list):
        return "[" + " ".join(_text(item) for item in value) + "]"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = (f"{field.name}={_text(getattr(value, field.name))}" for field in dataclasses.fields(value))
        return " ".join((type(value).__name__, *fields))
    return str(value)


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _state_without_rules(state: GameState) -> dict[str, Any]:
    encoded = to_dict(state)
    del encoded["rules"]
    return encoded


def play(table: Table, game: str, choose: Callable[[Table], Bot], limit: int | None) -> Iterator[str]:
    """The lines of one seeded game: a header, then one per decision (and full records where due)."""
    seed = _seed(table, game)
    first = start(table.variant, table.players, seed, **dict(table.options))
    state = evolve(None, first)
    yield f"# game {game}: " + _json({"start": to_dict(first), "rules": to_dict(state.rules)})
    full = FULL_DECISIONS if table.players == 2 and limit is None else 0
    deal_end_shown = False
    bot = choose(table)
    rngs = [bot_rng(seed, seat) for seat in range(table.players)]
    asked: set[int] = set()
    decision = 0
    while state.phase is not Phase.GAME_OVER and (limit is None or decision < limit):
        seat = state.turn
        if others_may_act(state):  # contract buying: each eligible seat is asked once, in order
            waiting = [buyer for buyer in buyers(state) if buyer not in asked]
            if waiting:
                seat = waiting[0]
                asked.add(seat)
        if seat == state.turn:
            asked.clear()
        actions = legal_actions(state, seat)
        command = bot(SeatView(state, seat), actions, rngs[seat])
        chosen = actions.index(command)
        events = decide(state, command, seed=seed)
        for event in events:
            state = evolve(state, event)
        digest, said = _digest(actions, chosen, events, state), "; ".join(_text(event) for event in events)
        yield f"{seat} {chosen}/{len(actions)} {digest}  {_text(command)} -> {said}"
        ends_deal = any(type(event) is DealEnded for event in events)
        if decision < full or (full and ends_deal and not deal_end_shown):
            deal_end_shown = deal_end_shown or ends_deal
            record = {
                "decision": decision,
                "seat": seat,
                "legal": [to_dict(action) for action in actions],
                "chosen": chosen,
                "events": [to_dict(event) for event in events],
                "state": _state_without_rules(state),
            }
            yield "# full: " + _json(record)
        decision += 1
    yield f"# end: decision {decision}, phase {state.phase.value}, totals {list(state.totals)}"


def _greedy(table: Table) -> Bot:
    return variant_named(table.variant).own_greedy() or greedy


def _random(table: Table) -> Bot:
    return random_legal


def playthrough(table: Table) -> Iterator[str]:
    """Every line of one table's golden file."""
    yield from play(table, "greedy", _greedy, None)
    yield from play(table, "random", _random, RANDOM_DECISIONS)


def path(table: Table) -> Path:
    return GOLDEN / f"{table.name}.txt"


def write() -> None:
    GOLDEN.mkdir(exist_ok=True)
    for table in TABLES:
        path(table).write_text("".join(f"{line}\n" for line in playthrough(table)))
        print(f"wrote {path(table)}", file=sys.stderr)


if __name__ == "__main__":
    write()
