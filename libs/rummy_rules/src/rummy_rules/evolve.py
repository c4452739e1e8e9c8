"""The fold: `evolve` applies one accepted event to the state, one small function per event type.

Evolve validates nothing and cannot fail; replay and snapshots rely on it. The events of play (a
draw, a discard) build the next state from a list of its fields by position: `_replace` parses
keywords and costs several times as much, and they run on every move. The rarer events update the
state by field name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import reduce
from typing import Any, Final, TypeVar

from rummy_rules.cards import JOKER, Card
from rummy_rules.contract_state import buy_granted, buy_offered, buy_passed, buy_requested, buy_waived
from rummy_rules.deal import dealt, next_seat
from rummy_rules.errors import RuleViolation
from rummy_rules.events import (
    BuyGranted,
    BuyOffered,
    BuyPassed,
    BuyRequested,
    BuyWaived,
    CardDiscarded,
    CardDrawn,
    CardsLaidOff,
    DealEnded,
    DealStarted,
    Event,
    GameEnded,
    GameStarted,
    JokerSwapped,
    MeldsLaid,
    SeatForfeited,
    StockReshuffled,
)
from rummy_rules.melds import RUN
from rummy_rules.rules import ALL_AT_ONCE, MatchMode, Rules
from rummy_rules.stalemate import stalemate_voids
from rummy_rules.state import DEAL_OVER, DRAW, GAME_OVER, PLAY, GameState
from rummy_rules.variant import rules_for


def without_one(hand: tuple[Card, ...], card: Card) -> tuple[Card, ...]:
    index = hand.index(card)
    return hand[:index] + hand[index + 1 :]


def without(hand: tuple[Card, ...], cards: Iterable[Card]) -> tuple[Card, ...]:
    rest = list(hand)
    for card in cards:
        rest.remove(card)
    return tuple(rest)


def set_at(items: tuple[Any, ...], index: int, value: Any) -> tuple[Any, ...]:
    changed = list(items)  # a copy and a store: a third cheaper than joining two slices
    changed[index] = value
    return tuple(changed)


# Field positions for the evolvers of the events of play (draws, discards, melds, layoffs; the
# contract buy window's are in `contract_state`, built the same way), which build the next state
# from a list of its fields: `_replace` parses keywords, 3.8 us against 1.0 us for six fields
# (timeit, Python 3.11), and moved contract 4-player games by 0.6% of their instructions for buys
# alone. Rarer events (joker swaps, reshuffles, deal and game ends) update the state by field name.
_FIELD: Final = {name: index for index, name in enumerate(GameState._fields)}
_HANDS, _STOCK, _DISCARD, _TURN = _FIELD["hands"], _FIELD["stock"], _FIELD["discard"], _FIELD["turn"]
_PHASE, _TAKEN, _START_OPENED = _FIELD["phase"], _FIELD["taken"], _FIELD["turn_start_opened"]
_EXTENDED, _TOOK_UNOPENED = _FIELD["extended"], _FIELD["took_unopened"]
_MELDS, _OWNERS, _OPENED, _CREDITS = _FIELD["melds"], _FIELD["owners"], _FIELD["opened"], _FIELD["credits"]
_PROGRESSED = _FIELD["progressed"]
_TURN_IDLE, _IDLE_TURNS = _FIELD["turn_idle"], _FIELD["idle_turns"]
_new_state: Final = tuple.__new__


def evolve(state: GameState | None, event: Event) -> GameState:
    """Apply one accepted event; no validation, cannot fail (replay and snapshots rely on it)."""
    if type(event) is GameStarted:
        return _started(event)
    assert state is not None, "a game's first event is GameStarted"
    return _EVOLVERS[type(event)](state, event)


def _started(event: GameStarted) -> GameState:
    rules = rules_for(event.variant, event.players, **dict(event.options))
    players = range(event.players)
    blank = GameState(
        rules=rules,
        seed_commitment=event.seed_commitment,
        deal=0,
        dealer=event.dealer,
        hands=(),
        stock=(),
        discard=(),
        melds=(),
        owners=(),
        opened=(),
        turn=0,
        phase=DRAW,
        taken=None,
        turn_start_opened=False,
        extended=False,
        took_unopened=False,
        credits=(),
        active=tuple(True for _ in players),
        totals=tuple(0 for _ in players),
        penalties=tuple(0 for _ in players),
        deals_done=0,
        reshuffles=0,
        winners=(),
        payouts=(),
    )
    if not event.deck:  # the first deal waits for the seats' seeds: its DealStarted deals it
        return blank._replace(
            phase=DEAL_OVER, hands=tuple(() for _ in players), opened=tuple(False for _ in players)
        )
    return dealt(blank, rules.first_deal, event.dealer, event.deck)


def _drawn(state: GameState, event: CardDrawn) -> GameState:
    seat = event.seat
    if event.from_discard:
        return drawn_from_pile(state, seat, (event.card,))
    values = list(state)
    values[_HANDS] = set_at(state.hands, seat, (*state.hands[seat], event.card))
    values[_PHASE] = PLAY
    values[_START_OPENED] = state.opened[seat]
    values[_EXTENDED] = False
    values[_STOCK] = state.stock[:-1]
    values[_TAKEN] = None
    values[_TOOK_UNOPENED] = False
    values[_TURN_IDLE] = False
    return _new_state(GameState, values)


def drawn_from_pile(state: GameState, seat: int, cards: tuple[Card, ...]) -> GameState:
    """`seat` takes `cards` off the top of the discard pile, top card first: the state their
    `CardDrawn` events fold to, built once (a rummy500 pick takes several, `_pick` checks its use here)."""
    opened = state.opened[seat]
    values = list(state)
    values[_HANDS] = set_at(state.hands, seat, (*state.hands[seat], *cards))
    values[_PHASE] = PLAY
    values[_START_OPENED] = opened
    values[_EXTENDED] = False
    values[_DISCARD] = state.discard[: len(state.discard) - len(cards)]
    values[_TAKEN] = cards[-1]
    values[_TOOK_UNOPENED] = not opened
    values[_TURN_IDLE] = True
    return _new_state(GameState, values)


def _discarded(state: GameState, event: CardDiscarded) -> GameState:
    seat = event.seat
    hand = without_one(state.hands[seat], event.card)
    discard = (*state.discard, event.card)
    idle_turns = state.idle_turns + 1 if state.turn_idle else 0
    if not hand:
        return state._replace(hands=set_at(state.hands, seat, hand), discard=discard, idle_turns=idle_turns)
    values = list(state)
    values[_HANDS] = set_at(state.hands, seat, hand)
    values[_DISCARD] = discard
    values[_TURN] = next_seat(state.active, seat)
    values[_PHASE] = DRAW
    values[_TAKEN] = None
    values[_IDLE_TURNS] = idle_turns
    return _new_state(GameState, values)


def _melds_laid(state: GameState, event: MeldsLaid) -> GameState:
    seat = event.seat
    melds = event.melds
    used = [card for meld in melds for card in meld.cards]
    values = list(state)
    values[_HANDS] = set_at(state.hands, seat, without(state.hands[seat], used))
    values[_MELDS] = state.melds + melds
    values[_OWNERS] = state.owners + (seat,) * len(melds)
    values[_CREDITS] = state.credits + tuple((seat,) * len(meld.cards) for meld in melds)
    values[_OPENED] = set_at(state.opened, seat, True)
    values[_PROGRESSED] = True
    values[_TURN_IDLE] = False
    return _new_state(GameState, values)


def _laid_off_event(state: GameState, event: CardsLaidOff) -> GameState:
    seat = event.seat
    before = state.melds[event.meld]
    # rummy500 D12: each card laid off is credited to the seat that laid it, at its place.
    below = before.rank - event.result.rank if before.kind is RUN else 0
    above = len(event.result.cards) - len(before.cards) - below
    credit = (*(seat,) * below, *state.credits[event.meld], *(seat,) * above)
    values = list(state)
    values[_HANDS] = set_at(state.hands, seat, without(state.hands[seat], event.cards))
    values[_MELDS] = set_at(state.melds, event.meld, event.result)
    values[_CREDITS] = set_at(state.credits, event.meld, credit)
    values[_EXTENDED] = True
    values[_PROGRESSED] = True
    values[_TURN_IDLE] = False
    return _new_state(GameState, values)


def _joker_swapped(state: GameState, event: JokerSwapped) -> GameState:
    seat = event.seat
    hand = (*without(state.hands[seat], event.cards), JOKER)
    grown = len(event.result.cards) - len(state.melds[event.meld].cards)  # kalooki D11 adds a card
    return state._replace(
        hands=set_at(state.hands, seat, hand),
        melds=set_at(state.melds, event.meld, event.result),
        credits=set_at(state.credits, event.meld, state.credits[event.meld] + (seat,) * grown),
        extended=True,
        progressed=True,
        turn_idle=False,
    )


def _stock_reshuffled(state: GameState, event: StockReshuffled) -> GameState:
    keep = 0 if state.rules.reshuffle is ALL_AT_ONCE else 1
    return state._replace(
        stock=tuple(reversed(event.cards)),
        discard=state.discard[len(state.discard) - keep :] if keep else (),
        reshuffles=state.reshuffles + 1,
        progressed=False,  # meldstream M1: a new stock cycle begins
        stale_cycles=0 if state.progressed else state.stale_cycles + 1,
    )


def _deal_ended(state: GameState, event: DealEnded) -> GameState:
    totals = tuple(total + penalty for total, penalty in zip(state.totals, event.penalties, strict=True))
    active = state.active
    if state.rules.match_mode is MatchMode.ELIMINATION:
        limit = state.rules.elimination_limit
        active = tuple(alive and total < limit for alive, total in zip(active, totals, strict=True))
    if event.stalemate:
        counted = not stalemate_voids(state)  # meldstream M1
    else:
        # kalooki §3.11.3: a deal without a winner is void there; elsewhere it counts (D10, D16).
        counted = event.winner is not None or not _voids(state.rules)
    return state._replace(
        phase=DEAL_OVER,
        totals=totals,
        penalties=event.penalties,
        active=active,
        deals_done=state.deals_done + counted,
        stalemates=state.stalemates + event.stalemate,
    )


def _deal_started(state: GameState, event: DealStarted) -> GameState:
    return dealt(state, event.deal, event.dealer, event.deck)


def _game_ended(state: GameState, event: GameEnded) -> GameState:
    return state._replace(
        phase=GAME_OVER, winners=event.winners, payouts=event.payouts, revealed_seed=event.seed
    )


def _seat_forfeited(state: GameState, event: SeatForfeited) -> GameState:
    """meldstream M3: the seat leaves play, charged its points; on its turn the next seat is to draw."""
    seat = event.seat
    active = set_at(state.active, seat, False)
    total = state.totals[seat] + event.points
    state = state._replace(
        active=active, totals=set_at(state.totals, seat, total), forfeited=(*state.forfeited, seat)
    )
    if state.turn != seat or not any(active) or state.phase not in (DRAW, PLAY):
        return state
    return state._replace(
        turn=next_seat(active, seat), phase=DRAW, taken=None, extended=False, took_unopened=False
    )


Evolver = Callable[[GameState, Any], GameState]
E = TypeVar("E", bound=Event)


def evolves(event: type[E], evolver: Callable[[GameState, E], GameState]) -> tuple[type[Any], Evolver]:
    """An (event type, evolver) entry of `_EVOLVERS`, the evolver checked against the type."""
    return event, evolver


# One lookup by the event's type, not a chain of isinstance tests (evolve runs on every event).
_EVOLVER_ENTRIES = (
    evolves(CardDrawn, _drawn),
    evolves(CardDiscarded, _discarded),
    evolves(MeldsLaid, _melds_laid),
    evolves(CardsLaidOff, _laid_off_event),
    evolves(JokerSwapped, _joker_swapped),
    evolves(StockReshuffled, _stock_reshuffled),
    evolves(BuyOffered, buy_offered),  # contract rummy's buy window: contract_state
    evolves(BuyRequested, buy_requested),
    evolves(BuyGranted, buy_granted),
    evolves(BuyPassed, buy_passed),
    evolves(BuyWaived, buy_waived),
    evolves(DealEnded, _deal_ended),
    evolves(DealStarted, _deal_started),
    evolves(GameEnded, _game_ended),
    evolves(SeatForfeited, _seat_forfeited),
)
_EVOLVERS: Final[dict[type[Any], Evolver]] = dict(_EVOLVER_ENTRIES)


def _voids(rules: Rules) -> bool:
    return rules.match_mode is MatchMode.SINGLE_DEAL or rules.match_mode is MatchMode.ELIMINATION


def replay(events: Iterable[Event]) -> GameState:
    """The state after `events`, the first of which is the game's `GameStarted`."""
    state: GameState | None = reduce(evolve, events, None)
    if state is None:
        raise RuleViolation("empty_history", "a game history starts with GameStarted")
    return state


def evolved(state: GameState, events: Iterable[Event]) -> GameState:
    for event in events:
        state = evolve(state, event)
    return state
