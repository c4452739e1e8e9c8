"""docs/adding-a-variant.md, proved: a toy variant written as one module plays whole games.

`Toy` below is what `rummy_rules/variants/toy.py` would hold; registering it is the one line
`variants/__init__.py` would gain. Nothing else in the package changes: the engine, the bots, the
views and serialization find the variant through the registry. A second test keeps the rule that
makes this true: outside its own module, no code in the package tests a variant's name.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest
import rummy_rules
from rummy_rules import rules, variant
from rummy_rules.bots import greedy, random_legal
from rummy_rules.events import DealEnded, Event, GameEnded
from rummy_rules.game import legal_actions, replay
from rummy_rules.options import VariantOptions
from rummy_rules.rules import (
    GoingOut,
    JokerSwap,
    MatchMode,
    Reshuffle,
    Rules,
    check_players,
    parse_options,
    pip_penalties,
)
from rummy_rules.scoring import match_winners
from rummy_rules.secret import Seed, secret
from rummy_rules.serialize import from_dict, to_dict
from rummy_rules.simulate import simulate
from rummy_rules.state import GameState
from rummy_rules.variant import rules_for
from rummy_rules.variants.base import StandardVariant
from rummy_rules.views import observe

# --- what rummy_rules/variants/toy.py would hold ------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToyOptions(VariantOptions):
    """Toy rummy's house rules: how many cards each player gets, and the score that ends the match."""

    cards_dealt: int = 7
    match_points: int = 100


CITATIONS: Final[Mapping[str, str]] = {"players": "§1", "set": "§2", "run": "§2", "go_out": "§3"}


class Toy(StandardVariant):
    """One pack, no jokers, seven cards, melds from the first turn; out at `match_points`."""

    id = "toy"
    citations = CITATIONS
    players = range(2, 5)

    def rules(self, players: int, options: Mapping[str, Any]) -> Rules:
        o: ToyOptions = parse_options(self.id, ToyOptions, {}, options)
        check_players(self.id, self.players, players)
        return Rules(
            variant=self.id,
            players=players,
            packs=1,
            jokers=0,
            hand_size=o.cards_dealt,
            upcard=True,
            set_min=3,
            set_max=4,
            natural_set_distinct_suits=True,
            joker_set_distinct_suits=True,
            run_min=3,
            ace_low_in_runs=True,
            ace_low_value=1,
            ace_high_value=1,
            ace_set_value=1,
            penalty=pip_penalties(1, 0),
            opening_min_points=0,
            opening_single_meld=False,
            open_before_layoff=False,
            layoff_on_others=True,
            joker_swap=JokerSwap.NONE,
            freed_joker_must_be_used=False,
            going_out=GoingOut.EITHER,
            reshuffle=Reshuffle.ALL_BUT_TOP,
            kalooki_surcharge=0,
            kalooki_exempt_from_opening=False,
            discard_draw_must_open=False,
            match_mode=MatchMode.FIXED_DEALS,
            deals=o.match_points,
            elimination_limit=0,
            prize_pool=0,
            options=o,
        )

    def match_over(
        self, before: GameState, after: GameState, ended: DealEnded, seed: Seed
    ) -> list[Event] | None:
        """The match ends once a seat reaches `match_points`; fewest points win."""
        if max(after.totals) < after.rules.deals:
            return None
        return [
            GameEnded(
                tuple(match_winners(dict(enumerate(after.totals)))), after.totals, (), secret(before, seed)
            )
        ]


TOY: Final = Toy()

# --- the tests -----------------------------------------------------------------------------------


@pytest.fixture
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    # What `register(TOY)` in variants/__init__.py does, undone after the test.
    monkeypatch.setitem(variant.REGISTRY, TOY.id, TOY)
    monkeypatch.setitem(rules.CITATIONS, TOY.id, TOY.citations)


@pytest.mark.usefixtures("toy_registered")
@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_variant_written_as_one_module_plays_whole_games(players: int) -> None:
    for number, bot in enumerate((greedy, random_legal)):
        seed = hashlib.sha256(f"toy/{players}/{number}".encode()).digest()
        result = simulate("toy", players, seed, bot, options={"match_points": 60}, max_decisions=50_000)
        assert result.finished
        assert max(result.totals) >= 60
        assert sum(isinstance(event, DealEnded) for event in result.events) >= 1
        assert replay(result.events) == result.final
        assert from_dict(to_dict(result.final)) == result.final  # snapshots work for its options too
        assert observe(result.final, 0).hand == result.final.hands[0]
        assert legal_actions(result.final, result.final.turn) == ()


@pytest.mark.usefixtures("toy_registered")
def test_a_new_variant_checks_its_options_and_table_size() -> None:
    assert rules_for("toy", 3, cards_dealt=5).hand_size == 5
    with pytest.raises(Exception, match="toy has no option 'jokers'"):
        rules_for("toy", 2, jokers=2)
    with pytest.raises(Exception, match="toy is played by 2 to 4 players"):
        rules_for("toy", 5)


# `x == "kalooki"`, `x !== "contract"`, `rules.variant in (...)`: a branch on a variant's name.
_NAME_TEST = re.compile(
    r"""(===?|!==?)\s*["'](kalooki|rummy40|rummy500|contract)["']|\.variant\s+(not\s+)?in\s"""
)
REPO: Final = Path(__file__).resolve().parents[3]


def test_no_code_outside_its_variant_module_tests_a_variant_name() -> None:
    """The libraries and services, the browser app's scripts included, ask the variant object (or,
    in the browser, the facts the gateway serves from it) instead of branching on a name."""
    sources = [
        path
        for root in (*REPO.glob("libs/*/src"), *REPO.glob("services/*/src"))
        for path in sorted(root.rglob("*"))
        if path.suffix in (".py", ".js") and path.parent != Path(rummy_rules.__file__).parent / "variants"
    ]
    assert len(sources) > 100 and any(path.suffix == ".js" for path in sources)
    offenders = [
        f"{path.relative_to(REPO)}:{number}"
        for path in sources
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if _NAME_TEST.search(line)
    ]
    assert offenders == []
