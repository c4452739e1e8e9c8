"""What happens when the stock runs out: a reshuffle of the discards, or the end of the deal."""

from __future__ import annotations

from typing import Final

from rummy_rules.cards import Card, shuffle
from rummy_rules.deal_end import deal_over, end_stalled_deal
from rummy_rules.errors import RuleViolation
from rummy_rules.events import Event, StockReshuffled
from rummy_rules.rules import ALL_BUT_TOP, END_IMMEDIATELY, Reshuffle
from rummy_rules.secret import Seed, reshuffle_seed, shuffle_secret
from rummy_rules.state import GameState


def refill(state: GameState, seed: Seed) -> list[Event]:
    """What happens when a card must come from the empty stock: a reshuffle, or the deal ends.

    contract D16: all discards but the top one become the stock; with none, the round ends without
    a closer. rummy500 D10: whoever must draw from the empty stock and does not take from the pile
    ends the deal (option exhausted_stock: reshuffle_discards as contract, end_immediately alike).
    """
    rules = state.rules
    if rules.reshuffle is ALL_BUT_TOP and len(state.discard) > 1:
        return rebuild(state, state.discard[:-1], seed)
    if rules.reshuffle in _ENDS_ON_EMPTY_STOCK:
        return deal_over(state, seed, None, kalooki=False)
    raise RuleViolation("stock_empty", "the stock is empty", rules.cite("reshuffle"))


_ENDS_ON_EMPTY_STOCK: Final = (ALL_BUT_TOP, Reshuffle.NONE_END_DEAL, END_IMMEDIATELY)


def _reshuffled(state: GameState, cards: tuple[Card, ...], seed: Seed) -> StockReshuffled:
    return StockReshuffled(shuffle(cards, reshuffle_seed(shuffle_secret(state, seed), state.reshuffles + 1)))


def rebuild(state: GameState, cards: tuple[Card, ...], seed: Seed) -> list[Event]:
    """The stock rebuilt from `cards`, or the end of a stalled deal (meldstream M1).

    `state` is the position the rebuild happens in (hands final). M1: when this rebuild would end
    the `stalemate_reshuffles`-th consecutive stock cycle in which nobody melded, laid off or
    swapped a card, nobody can be trying to finish, so the deal ends without a winner instead.
    """
    limit = state.rules.stalemate_reshuffles
    if limit and not state.progressed and state.stale_cycles + 1 >= limit:
        return end_stalled_deal(state, seed)
    return [_reshuffled(state, cards, seed)]
