"""The state of one game, as `game.evolve` folds it from events: plain tuples, no mutation."""

from __future__ import annotations

from enum import Enum
from typing import Any, Final, NamedTuple

from rummy_rules.cards import Card
from rummy_rules.melds import Meld
from rummy_rules.rules import Rules


class Phase(Enum):
    DRAW = "draw"  # the player to move must draw
    PLAY = "play"  # drawn: meld / lay off / swap, then discard
    DEAL_OVER = "deal_over"  # between a DealEnded and the next DealStarted or GameEnded
    GAME_OVER = "game_over"


# Members bound to module names: in Python 3.11 `Phase.DRAW` takes EnumType.__getattr__'s slow path
# (~0.1 us, ten times an attribute), and the hot paths test phases on every decision.
DRAW: Final = Phase.DRAW
PLAY: Final = Phase.PLAY
DEAL_OVER: Final = Phase.DEAL_OVER
GAME_OVER: Final = Phase.GAME_OVER

MAX_SEATS: Final = 8
"""The most seats a table can have (rummy500's largest, with two packs): the one place the limit is
written. Tables of prebuilt commands and events are indexed by seat over `SEATS`; a variant seating
more must raise it."""
SEATS: Final = range(MAX_SEATS)


class VariantState:
    """A variant's own part of the game state, in `GameState.variant_state` (None for a variant that
    keeps none), so the shared fields name no variant's ideas. A subclass is a frozen dataclass kept
    with its variant (contract rummy's buy window: `contract_state.ContractState`); `serialize` finds
    it by its class name.

    `open_to_others`: whether seats other than the one to move may act now (a card on offer), the
    one thing the shared turn code and the engine ask of it."""

    __slots__ = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # By name, the last class wins: a slotted dataclass replaces the class it was made from.
        VARIANT_STATES[cls.__name__] = cls

    def open_to_others(self) -> bool:
        return False


VARIANT_STATES: Final[dict[str, type[VariantState]]] = {}
"""Every `VariantState` subclass imported, by class name (how `serialize` finds one)."""


class GameState(NamedTuple):
    """Everything the rules need. `stock` and `discard` keep their top card last.

    A typed NamedTuple rather than a frozen dataclass: equally immutable, and `_replace` is several
    times cheaper, which is most of the cost of `evolve` on the hot path.

    `taken` is the card taken from the discard pile this turn (D8); `turn_start_opened` and
    `extended` record whether the mover had melds before the turn and has laid off or swapped in
    it (what a Kalooki is, kalooki D14); `took_unopened` whether the discard was taken before
    opening (kalooki option discard_draw_before_opening).

    `credits[i][j]` is the seat credited with card j of table meld i (rummy500 D12).
    `variant_state` is the variant's own part (`VariantState`: contract rummy's buys and buy window).

    meldstream M1 (stalled deals): `progressed` says whether a card was melded, laid off or swapped
    since the last stock rebuild of the deal (or its start), `stale_cycles` counts the consecutive
    rebuilds before which nothing progressed, `stalemates` the deals of the match ended by M1.
    They come last with defaults so positions built without them stay valid.

    The state holds no seed, so a snapshot cannot predict later deals: `decide` is handed it.
    `revealed_seed` is None until `GameEnded` reveals it.

    meldstream M3: `forfeited` lists the seats that forfeited the match, in order (each also inactive).

    meldstream M1, second trigger: `turn_idle` says whether the turn in play has neither drawn from
    the stock nor melded, laid off or swapped; `idle_turns` counts the consecutive turns that ended so.
    """

    rules: Rules
    seed_commitment: str
    deal: int
    dealer: int
    hands: tuple[tuple[Card, ...], ...]
    stock: tuple[Card, ...]
    discard: tuple[Card, ...]
    melds: tuple[Meld, ...]
    owners: tuple[int, ...]
    opened: tuple[bool, ...]
    turn: int
    phase: Phase
    taken: Card | None
    turn_start_opened: bool
    extended: bool
    took_unopened: bool
    credits: tuple[tuple[int, ...], ...]
    active: tuple[bool, ...]
    totals: tuple[int, ...]
    penalties: tuple[int, ...]
    deals_done: int
    reshuffles: int
    winners: tuple[int, ...]
    payouts: tuple[int, ...]
    progressed: bool = False
    stale_cycles: int = 0
    stalemates: int = 0
    revealed_seed: bytes | None = None
    turn_idle: bool = True
    idle_turns: int = 0
    variant_state: VariantState | None = None
    forfeited: tuple[int, ...] = ()


def shape() -> str:
    """The field names of the game state and of each variant's part of it (those imported): what a
    stored state must match to be read back (the engine keys its snapshots by it)."""
    parts = [",".join(GameState._fields)]
    for name, cls in sorted(VARIANT_STATES.items()):
        fields: dict[str, object] = getattr(cls, "__dataclass_fields__", {})  # a frozen dataclass
        parts.append(f"{name}({','.join(fields)})")
    return ";".join(parts)


def others_may_act(state: GameState) -> bool:
    """Whether seats other than the one to move may act now (contract rummy's buy window)."""
    extra = state.variant_state
    return extra is not None and extra.open_to_others()


def playing(state: GameState) -> list[int]:
    """The seats that have not forfeited the match (meldstream M3): the ones a match result may rank first."""
    return [seat for seat in range(len(state.active)) if seat not in state.forfeited]
