"""`StandardVariant`: the behaviour variants share, which a variant module overrides where it differs.

Standard play: draw from the stock or take the top discard, lay melds (an opening by value first
where `Rules.open_before_layoff`), lay off, swap jokers, discard; no buying, no deep pile picks. A
deal is scored by the cards left in the losers' hands, and the match ends after `Rules.deals`
counted deals, fewest points winning (rummy40 §3.12 D14).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rummy_rules.cards import Card
from rummy_rules.checks import take
from rummy_rules.commands import Command, LayMelds
from rummy_rules.contract_rules import Contract
from rummy_rules.errors import RuleViolation
from rummy_rules.events import DealEnded, Event, GameEnded
from rummy_rules.handlers import Entry
from rummy_rules.legal import draw_actions
from rummy_rules.melds import Meld, meld_value
from rummy_rules.openings import openings
from rummy_rules.rules import Rules
from rummy_rules.scoring import loser_penalty, match_winners
from rummy_rules.seat_view import Bot
from rummy_rules.secret import Seed, secret
from rummy_rules.state import GameState, VariantState, playing
from rummy_rules.turn import HANDLERS, parse_melds


class StandardVariant:
    """The shared behaviour behind the `Variant` protocol; subclasses set `id`, `citations` and `players`."""

    id: str
    citations: Mapping[str, str]
    players: range
    higher_is_better: bool = False
    voids_unwon_deals: bool = False
    spread_pile: bool = False
    table_rotation: bool = False
    melds_after_opening: bool = True
    buys: bool = False
    round_contracts: tuple[Contract, ...] = ()

    def __init__(self) -> None:
        self.handlers: Mapping[type[Command], Entry] = {**HANDLERS, **self.extra_handlers()}

    def rules(self, players: int, options: Mapping[str, Any]) -> Rules:
        raise NotImplementedError

    def extra_handlers(self) -> Mapping[type[Command], Entry]:
        """Handlers of the variant's own commands, or its versions of shared ones."""
        return {}

    def own_greedy(self) -> Bot | None:
        return None

    draw_actions = staticmethod(draw_actions)  # called directly on every draw

    def out_of_turn_actions(self, state: GameState, seat: int) -> tuple[Command, ...]:
        return ()

    def unopened_actions(self, state: GameState, seat: int) -> Sequence[Command] | None:
        rules = state.rules
        if not rules.open_before_layoff:
            return None
        must = state.taken if rules.discard_draw_must_open and state.took_unopened else None
        return openings(state, state.hands[seat], must)

    def lay_melds(self, state: GameState, command: LayMelds) -> tuple[tuple[Meld, ...], tuple[Card, ...]]:
        """The melds and the hand left after them, with the opening checks (kalooki D7, D14, D19)."""
        rules = state.rules
        seat = command.seat
        melds = parse_melds(state, command)
        used = [card for meld in melds for card in meld.cards]
        rest = take(state, seat, used)
        if not state.opened[seat]:
            values = [meld_value(meld, rules) for meld in melds]
            # rummy40 D7: several melds of one turn combine, unless the option opening_single_meld is set.
            value = max(values) if rules.opening_single_meld else sum(values)
            kalooki_turn = rules.kalooki_exempt_from_opening and len(rest) == 1  # kalooki D14
            if value < rules.opening_min_points and not kalooki_turn:
                raise RuleViolation(
                    "opening_below_minimum",
                    f"your opening melds are worth {value}; you need at least {rules.opening_min_points}",
                    rules.cite("opening"),
                )
            taken = state.taken
            if (
                rules.discard_draw_must_open
                and state.took_unopened
                and taken is not None
                and taken not in used
            ):
                raise RuleViolation(
                    "discard_draw_not_used",
                    f"{taken.text}, taken from the discard pile, must be part of your opening",
                    rules.cite("discard_draw"),
                )
        return melds, rest

    def dealt_state(self, rules: Rules, deal: int, players: int, upcard: Card | None) -> VariantState | None:
        return None

    def buyers(self, state: GameState) -> tuple[int, ...]:
        return ()

    def close_offer(self, state: GameState, seed: Seed, taken_by_forehand: bool) -> list[Event]:
        raise AssertionError(f"{self.id} never offers a card for sale")

    def offer_discard(self, state: GameState, seat: int, card: Card) -> Event | None:
        return None

    def going_out_bonus(self, state: GameState) -> bool:
        return False

    def deal_points(self, state: GameState, winner: int | None, bonus: bool) -> tuple[int, ...]:
        rules = state.rules
        return tuple(
            0 if seat == winner or not alive else loser_penalty(hand, rules, bonus)
            for seat, (hand, alive) in enumerate(zip(state.hands, state.active, strict=True))
        )

    def match_over(
        self, before: GameState, after: GameState, ended: DealEnded, seed: Seed
    ) -> list[Event] | None:
        if after.deals_done >= after.rules.deals:
            totals = dict(enumerate(after.totals))
            winners = match_winners(totals, playing(after))  # meldstream M3: never a forfeited seat
            return [GameEnded(tuple(winners), after.totals, (), secret(before, seed))]
        return None

    def forfeit_payouts(self, state: GameState, winners: tuple[int, ...]) -> tuple[int, ...]:
        return ()
