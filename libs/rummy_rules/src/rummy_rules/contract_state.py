"""Contract rummy's own part of the game state: each seat's buys this round and the buy window, and
how the buy events change it.

It sits in `GameState.variant_state`, not among the shared fields, so only contract code reads it:
the variant (`variants.contract`), its bot (through `SeatView.buys`), the views (`buying`), and
`evolve`, which applies the buy events with the evolvers here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from rummy_rules.cards import Card
from rummy_rules.events import BuyGranted, BuyOffered, BuyPassed, BuyRequested, BuyWaived
from rummy_rules.state import MAX_SEATS, GameState, VariantState


@dataclass(frozen=True, slots=True)
class ContractState(VariantState):
    """`buys` per seat this round; `offer` is the exposed card that may be bought until the forehand
    (`GameState.turn`) draws, `offer_from` its discarder (None for the upcard), `buy_request` the
    first seat that asked for it (D12), `waived` the seats that passed on it (D27), in order."""

    buys: tuple[int, ...]
    offer: Card | None = None
    offer_from: int | None = None
    buy_request: int | None = None
    waived: tuple[int, ...] = ()

    def open_to_others(self) -> bool:
        return self.offer is not None


def dealt(players: int, upcard: Card | None) -> ContractState:
    """At a deal's start: no buys yet, and the turned `upcard` on offer (None: nothing is)."""
    return ContractState(_NO_BUYS[players], upcard)


_NO_BUYS: Final = tuple((0,) * players for players in range(MAX_SEATS + 1))
_NOTHING: Final = tuple(ContractState(buys) for buys in _NO_BUYS)


def buying(state: GameState) -> ContractState:
    """The contract part of `state`; for a variant without buying, no buys and nothing on offer."""
    extra = state.variant_state
    if type(extra) is ContractState:
        return extra
    return _NOTHING[len(state.active)]


# The evolvers of the buy events (`evolve` dispatches to them). Each builds the next state from a list
# of its fields, as `evolve`'s evolvers of play do: cheaper than `_replace` on every offer.
_FIELD: Final = {name: index for index, name in enumerate(GameState._fields)}
_HANDS, _STOCK, _DISCARD = _FIELD["hands"], _FIELD["stock"], _FIELD["discard"]
_VARIANT_STATE: Final = _FIELD["variant_state"]
_new_state: Final = tuple.__new__


def _with(state: GameState, extra: ContractState) -> GameState:
    values = list(state)
    values[_VARIANT_STATE] = extra
    return _new_state(GameState, values)


def buy_offered(state: GameState, event: BuyOffered) -> GameState:
    return _with(state, ContractState(buying(state).buys, event.card, event.discarder))


def buy_requested(state: GameState, event: BuyRequested) -> GameState:
    now = buying(state)
    return _with(state, ContractState(now.buys, now.offer, now.offer_from, event.seat, now.waived))


def buy_granted(state: GameState, event: BuyGranted) -> GameState:
    seat = event.seat
    hands = list(state.hands)
    hands[seat] = (*hands[seat], event.card, event.stock_card)
    buys = list(buying(state).buys)
    buys[seat] = event.buys_this_round
    values = list(state)
    values[_HANDS] = tuple(hands)
    values[_DISCARD] = state.discard[:-1]
    values[_STOCK] = state.stock[:-1]
    values[_VARIANT_STATE] = ContractState(tuple(buys))
    return _new_state(GameState, values)


def buy_passed(state: GameState, event: BuyPassed) -> GameState:
    return _with(state, ContractState(buying(state).buys))


def buy_waived(state: GameState, event: BuyWaived) -> GameState:
    now = buying(state)
    return _with(
        state, ContractState(now.buys, now.offer, now.offer_from, now.buy_request, (*now.waived, event.seat))
    )
