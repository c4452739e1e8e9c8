"""What the engine and the services may ask a variant: the `Variant` protocol, and the registry.

A variant is one module in `rummy_rules.variants`: its `Rules` builder (deck, dealing, melds
allowed, going out, reshuffle, match mode as data) and the behaviour data cannot express, as the
hooks below. `variants.base.StandardVariant` holds the shared behaviour; a variant overrides what
differs. The engine looks a variant up by `Rules.variant` and never tests its name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

from rummy_rules.errors import RuleViolation
from rummy_rules.memo import remember
from rummy_rules.rules import CITATIONS, Rules

if TYPE_CHECKING:
    from rummy_rules.cards import Card
    from rummy_rules.commands import Command, LayMelds
    from rummy_rules.contract_rules import Contract
    from rummy_rules.events import DealEnded, Event
    from rummy_rules.handlers import Entry
    from rummy_rules.melds import Meld
    from rummy_rules.seat_view import Bot
    from rummy_rules.secret import Seed
    from rummy_rules.state import GameState, VariantState


class Variant(Protocol):
    """One rummy variant. Attributes are facts services need; methods are the engine's hooks."""

    id: str
    citations: Mapping[str, str]  # rule key -> spec section, for `Rules.cite`
    players: range  # the table sizes its default options seat (`rules` may seat more under options)
    higher_is_better: bool  # a higher total wins (scores and standings rank that way)
    voids_unwon_deals: bool  # a deal nobody won is void: no points, redealt (M1: the first times)
    spread_pile: bool  # the whole discard pile is public, not just its top card
    table_rotation: bool  # a tournament rotates players between tables each round
    melds_after_opening: bool  # new melds may be laid after a seat's opening (not in contract)
    buys: bool  # discards may be bought out of turn (`dealt_state`, `offer_discard`, `close_offer`)
    round_contracts: tuple[Contract, ...]  # each round's contract, round 1 first (empty: no contracts)
    # Command type -> (the phase it needs, the handler returning the events it causes): the shared
    # commands' (`turn.HANDLERS`) plus the variant's own.
    handlers: Mapping[type[Command], Entry]

    def rules(self, players: int, options: Mapping[str, Any]) -> Rules:
        """The rules at `players` seats with these house-rule options (refusing bad ones)."""
        ...

    def own_greedy(self) -> Bot | None:
        """The variant's own greedy bot where the shared one (`bots.greedy`) does not fit, or None."""
        ...

    def draw_actions(self, state: GameState, seat: int) -> tuple[Command, ...]:
        """The legal moves of the seat to draw."""
        ...

    def out_of_turn_actions(self, state: GameState, seat: int) -> tuple[Command, ...]:
        """The legal moves of a seat whose turn it is not (contract buying)."""
        ...

    def unopened_actions(self, state: GameState, seat: int) -> Sequence[Command] | None:
        """The meld moves of a seat that has not opened, or None when opening needs nothing special."""
        ...

    def lay_melds(self, state: GameState, command: LayMelds) -> tuple[tuple[Meld, ...], tuple[Card, ...]]:
        """The melds a LayMelds names and the hand left, checked as this variant lays and opens."""
        ...

    def dealt_state(self, rules: Rules, deal: int, players: int, upcard: Card | None) -> VariantState | None:
        """The variant's own part of the state (`GameState.variant_state`) as deal `deal` starts,
        `upcard` turned (None: no upcard); None for a variant that keeps none."""
        ...

    def buyers(self, state: GameState) -> tuple[int, ...]:
        """Seats that may still ask to buy the card on offer, in order."""
        ...

    def close_offer(self, state: GameState, seed: Seed, taken_by_forehand: bool) -> list[Event]:
        """The end of the buy window when the forehand draws (only while a card is on offer)."""
        ...

    def offer_discard(self, state: GameState, seat: int, card: Card) -> Event | None:
        """The event offering a discard for sale, or None."""
        ...

    def going_out_bonus(self, state: GameState) -> bool:
        """Whether the seat going out by discarding now earns the variant's bonus (a Kalooki)."""
        ...

    def deal_points(self, state: GameState, winner: int | None, bonus: bool) -> tuple[int, ...]:
        """What each seat adds to its total for the deal just ended (`state` is final)."""
        ...

    def match_over(
        self, before: GameState, after: GameState, ended: DealEnded, seed: Seed
    ) -> list[Event] | None:
        """The events ending the game after this deal (GameEnded), or None: another deal follows."""
        ...

    def forfeit_payouts(self, state: GameState, winners: tuple[int, ...]) -> tuple[int, ...]:
        """`GameEnded.payouts` of a match ended by forfeits (meldstream M3), `state` after the last."""
        ...


# Variant id -> variant. The engine reads it directly on its hot paths (a lookup, not a call).
REGISTRY: Final[dict[str, Variant]] = {}


def register(variant: Variant) -> Variant:
    """Add a variant to those `rules_for` and the engine know (`rummy_rules.variants` adds the four)."""
    REGISTRY[variant.id] = variant
    CITATIONS[variant.id] = variant.citations
    return variant


def variant_named(variant_id: str) -> Variant:
    """The registered variant `variant_id` (KeyError if none)."""
    return REGISTRY[variant_id]


def registered() -> tuple[str, ...]:
    """The ids of the registered variants, in registration order."""
    return tuple(REGISTRY)


def rules_for(variant: str, players: int, **options: Any) -> Rules:
    """The rules of `variant` for `players` players with the given house-rule options.

    One table kind (variant, size, options) gets one `Rules` object, built once: the memos keyed by
    a `Rules`' identity (a meld's options, the made melds, the table index) then serve every game
    of that kind instead of starting cold at each one.
    """
    known = registered()
    if variant not in known:
        raise RuleViolation("unknown_variant", f"no variant {variant!r}; known: {', '.join(known)}")
    model = variant_named(variant)
    # Typed: True == 1 and 2.0 == 2 as keys, but the variant refuses a bool or float where an int goes.
    key = (
        model,
        type(players),
        players,
        tuple(sorted((name, type(value), value) for name, value in options.items())),
    )
    try:
        rules = _RULES.get(key)
    except TypeError:  # an unhashable option value: let the variant refuse it
        return model.rules(players, options)
    if rules is None:
        rules = remember(_RULES, key, model.rules(players, options), _RULES_LIMIT)
    return rules


_RULES_LIMIT: Final = 1_000  # table kinds; services see a handful
_RULES: Final[dict[tuple[object, type, int, tuple[tuple[str, type, Any], ...]], Rules]] = {}
