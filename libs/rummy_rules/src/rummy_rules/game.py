"""A game as an event-sourced state machine: `start`, `legal_actions`, `decide`, `evolve`, `replay`.

`decide(state, command, seed=...)` checks a command against the variant's rules and returns the
events it causes, or raises `RuleViolation`; it never changes `state`. `evolve(state, event)` applies
one accepted event without validation and cannot fail. `replay(events)` folds a whole history. Deck
orders travel as data (`GameStarted.deck`, `DealStarted.deck`, `StockReshuffled.cards`), so replay
needs no randomness and no seed.

The seed is never in an event before `GameEnded` nor in the state: whoever reads the log or a
snapshot could otherwise predict every later deal and reshuffle. The caller keeps it (the engine
derives it per game) and hands it to `decide`, which uses it only for a new deal, a reshuffle or the
reveal, checking it against `GameStarted.seed_commitment` there.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from functools import reduce
from typing import Any, Final

from rummy_rules.cards import CARD_BY_CODE, JOKER, Card, make_deck, seed_commitment, shuffle
from rummy_rules.commands import (
    BuyDiscard,
    Command,
    Discard,
    DrawFromStock,
    GoOut,
    LayMelds,
    LayOff,
    PassBuy,
    PickFromPile,
    SwapJoker,
    TakeDiscard,
)
from rummy_rules.errors import RuleViolation
from rummy_rules.events import (
    BuyGranted,
    BuyOffered,
    BuyPassed,
    BuyRequested,
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
    OptionValue,
    StockReshuffled,
)
from rummy_rules.melds import (
    End,
    Meld,
    MeldKind,
    find_melds,
    lay_off,
    make_meld,
    meld_options,
    meld_value,
    swap_joker,
)
from rummy_rules.rules import GoingOut, MatchMode, Reshuffle, Rules, rules_for
from rummy_rules.secret import PROBE, Seed, deal_seed, reshuffle_seed, secret
from rummy_rules.state import GameState, Phase
from rummy_rules.variant import variant_named

# Enum members bound to module names: in Python 3.11 `Phase.DRAW` takes EnumType.__getattr__'s slow
# path (~0.1 us, ten times an attribute), and the hot paths test phases, kinds and options per decision.
DRAW: Final = Phase.DRAW
_PLAY: Final = Phase.PLAY
_DEAL_OVER: Final = Phase.DEAL_OVER
_GAME_OVER: Final = Phase.GAME_OVER
_RUN: Final = MeldKind.RUN
_SET: Final = MeldKind.SET
_LOW: Final = End.LOW
MELD_ALL: Final = GoingOut.MELD_ALL
DISCARD_REQUIRED: Final = GoingOut.DISCARD_REQUIRED
_ALL_BUT_TOP: Final = Reshuffle.ALL_BUT_TOP
_ALL_AT_ONCE: Final = Reshuffle.ALL_AT_ONCE
END_IMMEDIATELY: Final = Reshuffle.END_IMMEDIATELY
_KEEP_LAST_DISCARD: Final = Reshuffle.KEEP_LAST_DISCARD

__all__ = [
    "GameState",
    "Phase",
    "apply",
    "buyers",
    "deal_seed",
    "decide",
    "evolve",
    "legal_actions",
    "replay",
    "reshuffle_seed",
    "start",
]


# --- the deal ------------------------------------------------------------------------------------


def _first_dealer(seed: bytes, players: int) -> int:
    # kalooki D2 / rummy40 src S1 / contract D2: the first dealer is chosen at random, here from the
    # seed, unless the options fix it (contract first_dealer, meldstream M2).
    return int.from_bytes(hashlib.sha256(seed + b"/dealer").digest()[:8], "big") % players


def start(variant: str, players: int, seed: bytes, **options: OptionValue) -> GameStarted:
    """The first event of a new game: rules, seed commitment, first dealer and shuffled deck.

    Raises RuleViolation for an unknown variant, table size or option.
    """
    rules = rules_for(variant, players, **options)
    if not isinstance(seed, bytes) or len(seed) < 16:
        raise RuleViolation("bad_seed", "the seed must be at least 16 random bytes")
    deck = shuffle(make_deck(rules.packs, rules.jokers), deal_seed(seed, 1))
    return GameStarted(
        variant=variant,
        players=players,
        options=tuple(sorted(options.items())),
        seed_commitment=seed_commitment(seed),
        dealer=_first_dealer(seed, players) if rules.first_dealer is None else rules.first_dealer,
        deck=deck,
    )


def next_seat(active: tuple[bool, ...], seat: int) -> int:
    count = len(active)
    seat = (seat + 1) % count
    while not active[seat]:
        seat = (seat + 1) % count
    return seat


def _dealt(state: GameState, deal: int, dealer: int, deck: tuple[Card, ...]) -> GameState:
    """State at the start of a deal: 13 cards each, one at a time from the dealer's left (D2)."""
    rules = state.rules
    order = [next_seat(state.active, dealer)]
    while len(order) < sum(state.active):
        order.append(next_seat(state.active, order[-1]))
    hands: list[list[Card]] = [[] for _ in state.active]
    count = len(order)
    dealt = rules.hand_size * count
    for index in range(dealt):
        hands[order[index % count]].append(deck[index])
    rest = deck[dealt:]
    upcard = rest[:1] if rules.upcard else ()  # kalooki src ¶5; rummy40 §3.3.3 has none
    stock = tuple(reversed(rest[len(upcard) :]))
    # contract src ¶25, D15: the turned upcard may be bought, except in round 8.
    offer = upcard[0] if upcard and variant_named(rules.variant).buying(rules, deal) else None
    return state._replace(
        deal=deal,
        dealer=dealer,
        hands=tuple(tuple(hand) for hand in hands),
        stock=stock,
        discard=upcard,
        melds=(),
        owners=(),
        opened=tuple(False for _ in state.active),
        turn=order[0],
        phase=DRAW,
        taken=None,
        turn_start_opened=False,
        extended=False,
        took_unopened=False,
        credits=(),
        buys=tuple(0 for _ in state.active),
        offer=offer,
        offer_from=None,
        buy_request=None,
        penalties=tuple(0 for _ in state.active),
        progressed=False,
        stale_cycles=0,
        turn_idle=True,
        idle_turns=0,
    )


# --- evolve ---------------------------------------------------------------------------------------


def _without_one(hand: tuple[Card, ...], card: Card) -> tuple[Card, ...]:
    index = hand.index(card)
    return hand[:index] + hand[index + 1 :]


def without(hand: tuple[Card, ...], cards: Iterable[Card]) -> tuple[Card, ...]:
    rest = list(hand)
    for card in cards:
        rest.remove(card)
    return tuple(rest)


def _set_at(items: tuple[Any, ...], index: int, value: Any) -> tuple[Any, ...]:
    return (*items[:index], value, *items[index + 1 :])


# Field positions: the events of play build the next state directly from a list of the fields;
# `_replace` parses keywords and costs four times as much, on every move.
_FIELD: Final = {name: index for index, name in enumerate(GameState._fields)}
_HANDS, _STOCK, _DISCARD, _TURN = _FIELD["hands"], _FIELD["stock"], _FIELD["discard"], _FIELD["turn"]
_PHASE, _TAKEN, _START_OPENED = _FIELD["phase"], _FIELD["taken"], _FIELD["turn_start_opened"]
_EXTENDED, _TOOK_UNOPENED = _FIELD["extended"], _FIELD["took_unopened"]
_MELDS, _OWNERS, _OPENED, _CREDITS = _FIELD["melds"], _FIELD["owners"], _FIELD["opened"], _FIELD["credits"]
_PROGRESSED, _BUYS, _OFFER = _FIELD["progressed"], _FIELD["buys"], _FIELD["offer"]
_OFFER_FROM, _BUY_REQUEST = _FIELD["offer_from"], _FIELD["buy_request"]
_TURN_IDLE, _IDLE_TURNS = _FIELD["turn_idle"], _FIELD["idle_turns"]
_new_state: Final = tuple.__new__


def evolve(state: GameState | None, event: Event) -> GameState:
    """Apply one accepted event; no validation, cannot fail (replay and snapshots rely on it)."""
    if type(event) is GameStarted:
        return _started(event)
    assert state is not None, "a game's first event is GameStarted"
    # One lookup by the event's type, not a chain of isinstance tests (evolve runs on every event).
    evolver: Any = _EVOLVERS[type(event)]
    new_state: GameState = evolver(state, event)
    return new_state


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
        buys=(),
        offer=None,
        offer_from=None,
        buy_request=None,
        active=tuple(True for _ in players),
        totals=tuple(0 for _ in players),
        penalties=tuple(0 for _ in players),
        deals_done=0,
        reshuffles=0,
        winners=(),
        payouts=(),
    )
    return _dealt(blank, rules.first_deal, event.dealer, event.deck)


def _drawn(state: GameState, event: CardDrawn) -> GameState:
    seat = event.seat
    opened = state.opened[seat]
    values = list(state)
    values[_HANDS] = _set_at(state.hands, seat, (*state.hands[seat], event.card))
    values[_PHASE] = _PLAY
    values[_START_OPENED] = opened
    values[_EXTENDED] = False
    if event.from_discard:
        values[_DISCARD] = state.discard[:-1]
        values[_TAKEN] = event.card
        values[_TOOK_UNOPENED] = not opened
        values[_TURN_IDLE] = True
        return _new_state(GameState, values)
    values[_STOCK] = state.stock[:-1]
    values[_TAKEN] = None
    values[_TOOK_UNOPENED] = False
    values[_TURN_IDLE] = False
    return _new_state(GameState, values)


def _discarded(state: GameState, event: CardDiscarded) -> GameState:
    seat = event.seat
    hand = _without_one(state.hands[seat], event.card)
    discard = (*state.discard, event.card)
    idle_turns = state.idle_turns + 1 if state.turn_idle else 0
    if not hand:
        return state._replace(hands=_set_at(state.hands, seat, hand), discard=discard, idle_turns=idle_turns)
    values = list(state)
    values[_HANDS] = _set_at(state.hands, seat, hand)
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
    values[_HANDS] = _set_at(state.hands, seat, without(state.hands[seat], used))
    values[_MELDS] = state.melds + melds
    values[_OWNERS] = state.owners + (seat,) * len(melds)
    values[_CREDITS] = state.credits + tuple((seat,) * len(meld.cards) for meld in melds)
    values[_OPENED] = _set_at(state.opened, seat, True)
    values[_PROGRESSED] = True
    values[_TURN_IDLE] = False
    return _new_state(GameState, values)


def _laid_off_event(state: GameState, event: CardsLaidOff) -> GameState:
    seat = event.seat
    before = state.melds[event.meld]
    # rummy500 D12: each card laid off is credited to the seat that laid it, at its place.
    below = before.rank - event.result.rank if before.kind is _RUN else 0
    above = len(event.result.cards) - len(before.cards) - below
    credit = (*(seat,) * below, *state.credits[event.meld], *(seat,) * above)
    values = list(state)
    values[_HANDS] = _set_at(state.hands, seat, without(state.hands[seat], event.cards))
    values[_MELDS] = _set_at(state.melds, event.meld, event.result)
    values[_CREDITS] = _set_at(state.credits, event.meld, credit)
    values[_EXTENDED] = True
    values[_PROGRESSED] = True
    values[_TURN_IDLE] = False
    return _new_state(GameState, values)


def _joker_swapped(state: GameState, event: JokerSwapped) -> GameState:
    seat = event.seat
    hand = (*without(state.hands[seat], event.cards), JOKER)
    grown = len(event.result.cards) - len(state.melds[event.meld].cards)  # kalooki D11 adds a card
    values = list(state)
    values[_HANDS] = _set_at(state.hands, seat, hand)
    values[_MELDS] = _set_at(state.melds, event.meld, event.result)
    values[_CREDITS] = _set_at(state.credits, event.meld, state.credits[event.meld] + (seat,) * grown)
    values[_EXTENDED] = True
    values[_PROGRESSED] = True
    values[_TURN_IDLE] = False
    return _new_state(GameState, values)


def _stock_reshuffled(state: GameState, event: StockReshuffled) -> GameState:
    keep = 0 if state.rules.reshuffle is _ALL_AT_ONCE else 1
    return state._replace(
        stock=tuple(reversed(event.cards)),
        discard=state.discard[len(state.discard) - keep :] if keep else (),
        reshuffles=state.reshuffles + 1,
        progressed=False,  # meldstream M1: a new stock cycle begins
        stale_cycles=0 if state.progressed else state.stale_cycles + 1,
    )


def _buy_offered(state: GameState, event: BuyOffered) -> GameState:
    values = list(state)
    values[_OFFER] = event.card
    values[_OFFER_FROM] = event.discarder
    values[_BUY_REQUEST] = None
    return _new_state(GameState, values)


def _buy_requested(state: GameState, event: BuyRequested) -> GameState:
    values = list(state)
    values[_BUY_REQUEST] = event.seat
    return _new_state(GameState, values)


def _buy_granted(state: GameState, event: BuyGranted) -> GameState:
    seat = event.seat
    values = list(state)
    values[_HANDS] = _set_at(state.hands, seat, (*state.hands[seat], event.card, event.stock_card))
    values[_DISCARD] = state.discard[:-1]
    values[_STOCK] = state.stock[:-1]
    values[_BUYS] = _set_at(state.buys, seat, event.buys_this_round)
    values[_OFFER] = values[_OFFER_FROM] = values[_BUY_REQUEST] = None
    return _new_state(GameState, values)


def _buy_passed(state: GameState, event: BuyPassed) -> GameState:
    values = list(state)
    values[_OFFER] = values[_OFFER_FROM] = values[_BUY_REQUEST] = None
    return _new_state(GameState, values)


def _deal_ended(state: GameState, event: DealEnded) -> GameState:
    totals = tuple(total + penalty for total, penalty in zip(state.totals, event.penalties, strict=True))
    active = state.active
    if state.rules.match_mode is MatchMode.ELIMINATION:
        limit = state.rules.elimination_limit
        active = tuple(alive and total < limit for alive, total in zip(active, totals, strict=True))
    if event.stalemate:
        counted = not _stalemate_voids(state)  # meldstream M1
    else:
        # kalooki §3.11.3: a deal without a winner is void there; elsewhere it counts (D10, D16).
        counted = event.winner is not None or not _voids(state.rules)
    return state._replace(
        phase=_DEAL_OVER,
        totals=totals,
        penalties=event.penalties,
        active=active,
        deals_done=state.deals_done + counted,
        stalemates=state.stalemates + event.stalemate,
    )


def _deal_started(state: GameState, event: DealStarted) -> GameState:
    return _dealt(state, event.deal, event.dealer, event.deck)


def _game_ended(state: GameState, event: GameEnded) -> GameState:
    return state._replace(
        phase=_GAME_OVER, winners=event.winners, payouts=event.payouts, revealed_seed=event.seed
    )


_EVOLVERS: Final[dict[type[Any], Any]] = {
    CardDrawn: _drawn,
    CardDiscarded: _discarded,
    MeldsLaid: _melds_laid,
    CardsLaidOff: _laid_off_event,
    JokerSwapped: _joker_swapped,
    StockReshuffled: _stock_reshuffled,
    BuyOffered: _buy_offered,
    BuyRequested: _buy_requested,
    BuyGranted: _buy_granted,
    BuyPassed: _buy_passed,
    DealEnded: _deal_ended,
    DealStarted: _deal_started,
    GameEnded: _game_ended,
}


def _voids(rules: Rules) -> bool:
    return rules.match_mode is MatchMode.SINGLE_DEAL or rules.match_mode is MatchMode.ELIMINATION


# meldstream M1: stalled deals of a match that are void (and redealt) before later ones are scored.
STALEMATE_VOIDS: Final = 2


def _stalemate_voids(state: GameState) -> bool:
    """Whether a deal stopped by meldstream M1 now is void rather than scored.

    Kalooki §3.11.3 and rummy40 §3.10 void a deal nobody can win (no penalties, the same dealer
    deals again); M1 does so for the first STALEMATE_VOIDS stalemates of a match and scores later
    ones like a deal nobody went out of, so a match always ends. Rummy500 (D10) and contract (D16)
    always score a deal without a winner.
    """
    return variant_named(state.rules.variant).voids_stalemate and state.stalemates < STALEMATE_VOIDS


def replay(events: Iterable[Event]) -> GameState:
    """The state after `events`, the first of which is the game's `GameStarted`."""
    state: GameState | None = reduce(evolve, events, None)
    if state is None:
        raise RuleViolation("empty_history", "a game history starts with GameStarted")
    return state


# --- decide ---------------------------------------------------------------------------------------


def take(state: GameState, seat: int, cards: Sequence[Card]) -> tuple[Card, ...]:
    """The seat's hand without `cards`; refuses cards that are not there (or not cards at all)."""
    rest = list(state.hands[seat])
    for card in cards:
        if not isinstance(card, Card):
            raise RuleViolation("bad_card", f"not a card: {card!r}", state.rules.cite("hand"))
        try:
            rest.remove(card)
        except ValueError:
            raise RuleViolation(
                "card_not_in_hand", f"{card.text} is not in your hand", state.rules.cite("hand")
            ) from None
    return tuple(rest)


def _fits_somewhere(card: Card, melds: Sequence[Meld], rules: Rules) -> bool:
    # meld_options lists every single card lay_off accepts (test_melds checks it), memoised per meld.
    return any(fits is card for meld in melds for fits, _, _ in meld_options(meld, rules).layoffs)


def check_rest(state: GameState, seat: int, rest: tuple[Card, ...], melds: Sequence[Meld]) -> None:
    """Refuse a meld, layoff or swap that leaves a hand the player could not legally finish the turn with.

    `melds` are the table melds afterwards. Kalooki src ¶18: a card must remain for the discard, and
    it cannot be the card just taken from the discard pile (D8). Rummy40 D11: the last card can
    never be discarded, so it must still fit one of the melds the player may lay off on.
    """
    rules = state.rules
    if not rest:
        if rules.going_out is DISCARD_REQUIRED:
            raise RuleViolation(
                "must_keep_card_to_discard",
                "you must keep one card to discard: going out always ends with a discard",
                rules.cite("keep_card"),
            )
        return
    if len(rest) != 1:
        return
    card = rest[0]
    if rules.going_out is MELD_ALL:
        own = [m for i, m in enumerate(melds) if rules.layoff_on_others or _owner(state, i) == seat]
        if not _fits_somewhere(card, own, rules):
            raise RuleViolation(
                "last_card_unplayable",
                f"that would leave only {card.text}, which you could neither meld nor discard",
                rules.cite("go_out"),
            )
    elif card is state.taken:
        raise RuleViolation(
            "cannot_discard_taken",
            f"that would leave only {card.text}, the card you took from the discard pile, to discard",
            rules.cite("taken"),
        )


def _owner(state: GameState, index: int) -> int:
    # Melds laid in the pending action come after the table's and belong to the mover.
    return state.owners[index] if index < len(state.owners) else state.turn


def decide(state: GameState, command: Command, *, seed: bytes) -> list[Event]:
    """The events `command` causes in `state`, or RuleViolation (then nothing changes).

    `seed` is the game's secret seed (`start`'s): it orders the next deal or a reshuffle and is
    revealed in `GameEnded`. One whose SHA-256 is not `state.seed_commitment` raises ValueError (a
    caller's bug, not a rule violation), checked only when the decision needs the seed.
    """
    return decide_command(state, command, seed)


def decide_command(state: GameState, command: Command, seed: Seed) -> list[Event]:
    """`decide` with a seed that may be `PROBE` (legal_actions' dry runs)."""
    rules = state.rules
    handler = variant_named(rules.variant).handlers().get(type(command))
    if handler is None:
        raise RuleViolation("unknown_command", f"not a command: {type(command).__name__}", rules.cite("turn"))
    seat = command.seat
    if state.phase is _GAME_OVER or state.phase is _DEAL_OVER:
        raise RuleViolation("game_over", "the game is over; nobody may act", rules.cite("over"))
    if type(seat) is not int or not 0 <= seat < rules.players:
        raise RuleViolation("bad_seat", f"no seat {seat!r} at this table", rules.cite("turn"))
    if seat != state.turn and type(command) not in _OUT_OF_TURN:
        raise RuleViolation("not_your_turn", f"it is seat {state.turn}'s turn", rules.cite("turn"))
    events: list[Event] = handler(state, command, seed)
    return events


def apply(state: GameState, command: Command, *, seed: bytes) -> tuple[GameState, list[Event]]:
    """`decide` then `evolve` every resulting event: the new state and the events to append."""
    events = decide(state, command, seed=seed)
    for event in events:
        state = evolve(state, event)
    return state, events


def need_phase(state: GameState, phase: Phase) -> None:
    if state.phase is not phase:
        rules = state.rules
        if phase is DRAW:
            raise RuleViolation("already_drawn", "you have already drawn this turn", rules.cite("draw"))
        raise RuleViolation("must_draw_first", "draw a card first", rules.cite("draw"))


def _draw_stock(state: GameState, command: DrawFromStock, seed: Seed) -> list[Event]:
    need_phase(state, DRAW)
    events: list[Event] = []
    if state.offer is not None:
        # contract D12: the forehand draws from the stock, so the first buy request is granted now,
        # before the forehand's card (or the offer lapses).
        events = variant_named(state.rules.variant).close_offer(state, seed, taken_by_forehand=False)
        state = evolved(state, events)
        if not isinstance(events[-1], BuyGranted | BuyPassed):
            return events  # the deal ended (D16, meldstream M1)
    if not state.stock:
        more = refill(state, seed)
        events.extend(more)
        state = evolved(state, more)
        if not isinstance(more[-1], StockReshuffled):
            return events  # the deal ended (D10, D16, meldstream M1)
    drawn = _STOCK_DRAWS[command.seat][state.stock[-1].code]
    events.append(drawn)
    if len(state.stock) == 1 and state.rules.reshuffle is _ALL_AT_ONCE and state.discard:
        # rummy40 D12: as soon as the last stock card is drawn, every face-up card becomes the stock.
        events.extend(_rebuild(evolve(state, drawn), state.discard, seed))
    return events


def evolved(state: GameState, events: Iterable[Event]) -> GameState:
    for event in events:
        state = evolve(state, event)
    return state


def refill(state: GameState, seed: Seed) -> list[Event]:
    """What happens when a card must come from the empty stock: a reshuffle, or the deal ends.

    contract D16: all discards but the top one become the stock; with none, the round ends without
    a closer. rummy500 D10: whoever must draw from the empty stock and does not take from the pile
    ends the deal (option exhausted_stock: reshuffle_discards as contract, end_immediately alike).
    """
    rules = state.rules
    if rules.reshuffle is _ALL_BUT_TOP and len(state.discard) > 1:
        return _rebuild(state, state.discard[:-1], seed)
    if rules.reshuffle in _ENDS_ON_EMPTY_STOCK:
        return deal_over(state, seed, None, kalooki=False)
    raise RuleViolation("stock_empty", "the stock is empty", rules.cite("reshuffle"))


_ENDS_ON_EMPTY_STOCK: Final = (_ALL_BUT_TOP, Reshuffle.NONE_END_DEAL, END_IMMEDIATELY)


def buyers(state: GameState) -> tuple[int, ...]:
    """Seats that may still ask to buy the card on offer, from the forehand's left (contract §3.7.3)."""
    return variant_named(state.rules.variant).buyers(state)


def _reshuffled(state: GameState, cards: tuple[Card, ...], seed: Seed) -> StockReshuffled:
    return StockReshuffled(shuffle(cards, reshuffle_seed(secret(state, seed), state.reshuffles + 1)))


def _rebuild(state: GameState, cards: tuple[Card, ...], seed: Seed) -> list[Event]:
    """The stock rebuilt from `cards`, or the end of a stalled deal (meldstream M1).

    `state` is the position the rebuild happens in (hands final). M1: when this rebuild would end
    the `stalemate_reshuffles`-th consecutive stock cycle in which nobody melded, laid off or
    swapped a card, nobody can be trying to finish, so the deal ends without a winner instead.
    """
    limit = state.rules.stalemate_reshuffles
    if limit and not state.progressed and state.stale_cycles + 1 >= limit:
        return _stalemate(state, seed)
    return [_reshuffled(state, cards, seed)]


def _stalemate(state: GameState, seed: Seed) -> list[Event]:
    """The end of a deal stopped by meldstream M1: void and redealt, or scored (`_stalemate_voids`)."""
    if _stalemate_voids(state):
        zeros = tuple(0 for _ in state.active)
        return [DealEnded(None, False, zeros, stalemate=True), _new_deal(state, state.dealer, seed)]
    return deal_over(state, seed, None, kalooki=False, stalemate=True)


# meldstream M1, second trigger: this many rounds of the table in which no turn drew from the stock
# or melded, laid off or swapped end the deal (players only trading discards, never the stock).
STALEMATE_IDLE_ROUNDS: Final = 10


def _idle_stalemate(state: GameState) -> bool:
    """Whether the turn now ending is the last of STALEMATE_IDLE_ROUNDS idle rounds (M1 on)."""
    return (
        bool(state.rules.stalemate_reshuffles)
        and state.turn_idle
        and state.idle_turns + 1 >= STALEMATE_IDLE_ROUNDS * sum(state.active)
    )


def _take_discard(state: GameState, command: TakeDiscard, seed: Seed) -> list[Event]:
    need_phase(state, DRAW)
    rules = state.rules
    if not state.discard:
        raise RuleViolation("discard_pile_empty", "the discard pile is empty", rules.cite("draw"))
    card = state.discard[-1]
    seat = command.seat
    if not state.stock and rules.reshuffle is END_IMMEDIATELY:
        # rummy500 option end_immediately: an empty stock ends the deal at the next draw (D10).
        raise RuleViolation("stock_empty", "the stock is empty: the deal is over", rules.cite("reshuffle"))
    variant = variant_named(rules.variant)
    variant.check_take_discard(state)
    if state.offer is not None:  # contract §3.7.1: the forehand's first right ends the offer
        return [*variant.close_offer(state, seed, taken_by_forehand=True), PILE_DRAWS[seat][card.code]]
    if rules.discard_draw_must_open and not state.opened[seat] and not _opens_with(state, seat, card):
        raise RuleViolation(
            "discard_draw_not_usable",
            f"before opening you may take {card.text} only to use it in your opening melds this turn",
            rules.cite("discard_draw"),
        )
    return [PILE_DRAWS[seat][card.code]]


def parse_melds(state: GameState, command: LayMelds | GoOut) -> tuple[Meld, ...]:
    rules = state.rules
    if not command.melds:
        raise RuleViolation("nothing_to_lay", "name at least one meld", rules.cite("set"))
    melds = []
    for index, cards in enumerate(command.melds):
        kind = command.kinds[index] if index < len(command.kinds) else None
        if kind is not None and not isinstance(kind, MeldKind):
            raise RuleViolation(
                "bad_meld_kind", f"a meld kind is 'set' or 'run', not {kind!r}", rules.cite("set")
            )
        if not all(isinstance(card, Card) for card in cards):
            raise RuleViolation("bad_card", f"not a card in {cards!r}", rules.cite("hand"))
        melds.append(_made_meld(cards, rules, kind))
    return tuple(melds)


_MADE_MELDS: dict[tuple[tuple[Card, ...], int], tuple[Rules, Meld]] = {}


def _made_meld(cards: Sequence[Card], rules: Rules, kind: MeldKind | None) -> Meld:
    """`make_meld`, memoised per cards and kind (for the rules last seen with them): the same meld laid
    again is the same object, so its `meld_options` (memoised per meld) are known on the table."""
    if type(cards) is not tuple:
        return make_meld(cards, rules, kind)
    key = (cards, 0 if kind is None else 1 if kind is _SET else 2)  # an Enum hashes slowly
    entry = _MADE_MELDS.get(key)
    if entry is not None and entry[0] is rules:
        return entry[1]
    meld = make_meld(cards, rules, kind)
    if len(_MADE_MELDS) > 100_000:
        _MADE_MELDS.clear()
    _MADE_MELDS[key] = (rules, meld)
    return meld


def _lay_melds(state: GameState, command: LayMelds, seed: Seed) -> list[Event]:
    need_phase(state, _PLAY)
    seat = command.seat
    melds, rest = variant_named(state.rules.variant).lay_melds(state, command)
    check_rest(state, seat, rest, state.melds + melds)
    events: list[Event] = [MeldsLaid(seat, melds)]
    if not rest:
        events.extend(deal_over(evolved(state, events), seed, seat, kalooki=False))
    return events


def _table_meld(state: GameState, index: int, seat: int, action: str) -> Meld:
    rules = state.rules
    if rules.open_before_layoff and not state.opened[seat]:
        raise RuleViolation("not_opened", f"you must open before you {action}", rules.cite("open_first"))
    if type(index) is not int or not 0 <= index < len(state.melds):
        raise RuleViolation("no_such_meld", f"there is no table meld {index!r}", rules.cite("layoff"))
    return state.melds[index]


def _lay_off(state: GameState, command: LayOff, seed: Seed) -> list[Event]:
    need_phase(state, _PLAY)
    rules = state.rules
    seat = command.seat
    meld = _table_meld(state, command.meld, seat, "lay off")
    if not rules.layoff_on_others and state.owners[command.meld] != seat:
        raise RuleViolation(
            "layoff_on_others_meld", "you may lay off only onto your own melds", rules.cite("owner")
        )
    if command.at is not None and not isinstance(command.at, End):
        raise RuleViolation(
            "bad_end", f"a run end is low or high, not {command.at!r}", rules.cite("layoff_run")
        )
    rest = take(state, seat, command.cards)
    result = _laid_off(meld, command.cards, rules, command.at)
    check_rest(state, seat, rest, _set_at(state.melds, command.meld, result))
    events: list[Event] = [CardsLaidOff(seat, command.meld, tuple(command.cards), result)]
    if not rest:
        events.extend(deal_over(evolved(state, events), seed, seat, kalooki=False))
    return events


def _laid_off(meld: Meld, cards: Sequence[Card], rules: Rules, at: End | None) -> Meld:
    """`lay_off`, read off the memoised `meld_options` for one natural card that fits one way only.

    Such a card's result does not depend on `at` (lay_off ignores it then); a joker, several cards,
    a card that fits both ends or none go to lay_off, which also words the refusal.
    """
    if len(cards) == 1 and cards[0].suit is not None:
        card = cards[0]
        fits = [result for fit, _, result in meld_options(meld, rules).layoffs if fit is card]
        if len(fits) == 1:
            return fits[0]
    return lay_off(meld, cards, rules, at)


def _swap(state: GameState, command: SwapJoker, seed: Seed) -> list[Event]:
    need_phase(state, _PLAY)
    rules = state.rules
    seat = command.seat
    meld = _table_meld(state, command.meld, seat, "take a joker")
    take(state, seat, command.cards)
    result = swap_joker(meld, command.cards, rules)
    swapped = JokerSwapped(seat, command.meld, tuple(command.cards), result)
    then = command.then
    if then is None:
        if rules.freed_joker_must_be_used:
            raise RuleViolation(
                "freed_joker_unused",
                "a freed joker must be used this turn: send the meld or layoff that uses it with the release",
                rules.cite("swap_use"),
            )
        return [swapped]
    if not isinstance(then, LayMelds | LayOff) or then.seat != seat:
        raise RuleViolation(
            "bad_follow_up", "the joker's use must be your own meld or layoff", rules.cite("swap_use")
        )
    used = then.cards if isinstance(then, LayOff) else tuple(card for cards in then.melds for card in cards)
    if rules.freed_joker_must_be_used and JOKER not in used:
        raise RuleViolation(
            "freed_joker_unused", "the follow-up must use the freed joker", rules.cite("swap_use")
        )
    return [swapped, *decide_command(evolve(state, swapped), then, seed)]


def _discard(state: GameState, command: Discard, seed: Seed) -> list[Event]:
    need_phase(state, _PLAY)
    rules = state.rules
    seat = command.seat
    card = command.card
    hand = state.hands[seat]
    if card not in hand:
        take(state, seat, (card,))  # raises the precise refusal
    rest = _without_one(hand, card)
    if card is state.taken and card not in rest:
        raise RuleViolation(
            "cannot_discard_taken",
            f"you may not discard {card.text}, the card you just took from the discard pile",
            rules.cite("taken"),
        )
    if rules.discard_draw_must_open and state.took_unopened and not state.opened[seat]:
        raise RuleViolation(
            "discard_draw_not_used",
            "you took the discard before opening, so you must open with it this turn",
            rules.cite("discard_draw"),
        )
    events: list[Event] = [_DISCARDED[seat][card.code]]
    if not rest:
        if rules.going_out is MELD_ALL:
            raise RuleViolation(
                "cannot_go_out_by_discard",
                "you may not go out by discarding; meld every card instead",
                rules.cite("go_out"),
            )
        kalooki = variant_named(rules.variant).going_out_bonus(state)
        events.extend(deal_over(evolved(state, events), seed, seat, kalooki=kalooki))
        return events
    if _idle_stalemate(state):
        events.extend(_stalemate(evolved(state, events), seed))
        return events
    offer = variant_named(rules.variant).offer_discard(state, seat, card)
    if offer is not None:
        events.append(offer)
    if not state.stock:
        if rules.reshuffle is _KEEP_LAST_DISCARD:
            # kalooki D18: after the turn that drew the last card, all but the new discard is the stock.
            if not state.discard:
                events.extend(_void_deal(state, seed))  # kalooki §3.11.3
            else:
                events.extend(_rebuild(evolved(state, events), state.discard, seed))
        elif rules.reshuffle is _ALL_AT_ONCE:
            # rummy40 D12 when the pile was empty as the last card was drawn: reshuffle as soon as
            # face-up cards exist, so the next player can draw from the stock.
            events.extend(_rebuild(evolved(state, events), (*state.discard, card), seed))
    return events


def _go_out(state: GameState, command: GoOut, seed: Seed) -> list[Event]:
    need_phase(state, _PLAY)
    seat = command.seat
    events: list[Event] = []
    current = state
    steps: list[Command] = []
    if command.melds:
        steps.append(LayMelds(seat, command.melds, command.kinds))
    steps.extend(command.layoffs)
    if command.discard is not None:
        steps.append(Discard(seat, command.discard))
    for step in steps:
        if current.phase is not _PLAY:
            break
        produced = decide_command(current, step, seed)
        for event in produced:
            current = evolve(current, event)
        events.extend(produced)
    if not any(isinstance(event, DealEnded) and event.winner == seat for event in events):
        raise RuleViolation(
            "not_going_out",
            "these melds, layoffs and discard do not use every card in your hand",
            state.rules.cite("keep_card"),
        )
    return events


def deal_over(
    state: GameState, seed: Seed, winner: int | None, kalooki: bool, stalemate: bool = False
) -> list[Event]:
    """DealEnded and what follows it: the next deal or the end of the game (with the revealed seed).

    `state` is the position after the closing move, so hands and table are final.
    """
    variant = variant_named(state.rules.variant)
    ended = DealEnded(winner, kalooki, variant.deal_points(state, winner, kalooki), stalemate)
    after = evolve(state, ended)
    game_end = variant.match_over(state, after, ended, seed)
    if game_end is not None:
        return [ended, *game_end]
    dealer = next_seat(after.active, state.dealer)  # kalooki D2, rummy40 src S1: the deal rotates
    return [ended, _new_deal(state, dealer, seed)]


def _new_deal(state: GameState, dealer: int, seed: Seed) -> DealStarted:
    rules = state.rules
    deck = shuffle(make_deck(rules.packs, rules.jokers), deal_seed(secret(state, seed), state.deal + 1))
    return DealStarted(state.deal + 1, dealer, deck)


def _void_deal(state: GameState, seed: Seed) -> list[Event]:
    zeros = tuple(0 for _ in state.active)
    return [DealEnded(None, False, zeros), _new_deal(state, state.dealer, seed)]


def _no_deep_pick(state: GameState, command: PickFromPile, seed: Seed) -> list[Event]:
    need_phase(state, DRAW)
    rules = state.rules
    raise RuleViolation(
        "no_deep_pick", f"in {rules.variant} only the top discard can be taken", rules.cite("draw")
    )


def _no_buying(state: GameState, command: BuyDiscard | PassBuy, seed: Seed) -> list[Event]:
    rules = state.rules
    raise RuleViolation("no_buying", f"there is no buying in {rules.variant}", rules.cite("draw"))


Handler = Callable[[GameState, Any, Seed], list[Event]]
# The shared commands' handlers; a variant adds or replaces some (`Variant.handlers`).
HANDLERS: Final[dict[type[Command], Handler]] = {
    DrawFromStock: _draw_stock,
    TakeDiscard: _take_discard,
    LayMelds: _lay_melds,
    LayOff: _lay_off,
    SwapJoker: _swap,
    Discard: _discard,
    GoOut: _go_out,
    PickFromPile: _no_deep_pick,
    BuyDiscard: _no_buying,
    PassBuy: _no_buying,
}
_OUT_OF_TURN: Final = (BuyDiscard, PassBuy)  # contract §3.7.2: buying is out of turn


# --- legal actions --------------------------------------------------------------------------------


# Highest meld value a card of each rank can take (index 0: a joker may stand for an ace).
_MAX_MELD_VALUE: Final = (11, 11, *range(2, 11), 10, 10, 10)


_OPENING_STARTS: Final = 6  # packings tried from the best candidates: bounded, and enough to open


def openings(state: GameState, hand: Sequence[Card], must_include: Card | None = None) -> list[LayMelds]:
    """A bounded set of opening meld groups from `hand`: greedy packings that reach the minimum.

    For each candidate meld (best first), add disjoint candidates in value order until the opening
    minimum is met; also the packing that would leave one card (a Kalooki, kalooki D14).
    """
    rules = state.rules
    seat = state.turn
    candidates = find_melds(hand, rules)
    if not candidates:
        return []
    needs = sorted((_meld_facts(meld, rules) for meld in candidates), key=_by_value)
    minimum = rules.opening_min_points
    # Cheap bound first: a packing of disjoint candidates is worth at most the cards they cover
    # (each copy once, at most 11 each) and uses at most those cards (a Kalooki needs all but one).
    # Counts per card code; a candidate never holds the same code twice (find_melds: distinct
    # suits in sets, distinct ranks in runs, at most one joker), so a check is one lookup per card.
    held = [0] * len(CARD_BY_CODE)
    for card in hand:
        held[card.code] += 1
    covered = {card for meld in candidates for card in meld.cards}
    bound = sum(_MAX_MELD_VALUE[card.rank] * held[card.code] for card in covered)
    could_kalooki = (
        rules.kalooki_exempt_from_opening and sum(held[card.code] for card in covered) >= len(hand) - 1
    )
    if bound < minimum and not could_kalooki:
        return []
    found: dict[tuple[tuple[Card, ...], ...], LayMelds] = {}
    starts = [i for i, (_, meld, _) in enumerate(needs) if must_include is None or must_include in meld.cards]
    for start_index in starts[:_OPENING_STARTS]:
        first_value, first, first_codes = needs[start_index]
        pool = held.copy()
        for code in first_codes:
            pool[code] -= 1
        left = len(hand) - len(first_codes)
        chosen = [first]
        total = first_value
        if not rules.opening_single_meld:
            for index, (value, meld, codes) in enumerate(needs):
                if total >= minimum and left > 1:
                    break
                if index == start_index:
                    continue
                for code in codes:
                    if not pool[code]:
                        break
                else:  # every card of the candidate is still free (a loop, not all(): hot path)
                    for code in codes:
                        pool[code] -= 1
                    left -= len(codes)
                    chosen.append(meld)
                    total += value
        kalooki_turn = rules.kalooki_exempt_from_opening and left == 1
        if (first_value if rules.opening_single_meld else total) < minimum and not kalooki_turn:
            continue
        key = tuple(meld.cards for meld in chosen)
        if key in found:
            continue
        if left <= 1:
            rest = tuple(CARD_BY_CODE[code] for code, count in enumerate(pool) for _ in range(count))
            try:
                check_rest(state, seat, rest, state.melds + tuple(chosen))
            except RuleViolation:
                continue
        found[key] = LayMelds(seat, key, tuple(meld.kind for meld in chosen))
    return list(found.values())


_MeldFacts = tuple[int, Meld, tuple[int, ...]]
_MELD_FACTS: dict[int, tuple[Rules, _MeldFacts]] = {}


def _meld_facts(meld: Meld, rules: Rules) -> _MeldFacts:
    """(meld value, meld, card codes) of a candidate; find_melds memoises melds, so these repeat."""
    entry = _MELD_FACTS.get(id(meld))
    if entry is not None and entry[0] is rules and entry[1][1] is meld:
        return entry[1]
    if len(_MELD_FACTS) > 100_000:
        _MELD_FACTS.clear()
    facts = (meld_value(meld, rules), meld, tuple(card.code for card in meld.cards))
    _MELD_FACTS[id(meld)] = (rules, facts)
    return facts


def _by_value(facts: _MeldFacts) -> int:
    return -facts[0]


def legal_actions(state: GameState, seat: int) -> tuple[Command, ...]:
    """Every move `seat` may make now, with meld choices limited to a bounded useful set.

    Draw and discard choices are complete; melds come from `find_melds` (and greedy opening
    packings), layoffs are single cards at each open end, swaps give the exact card(s) needed.
    Every action returned is accepted by `decide`.
    """
    rules = state.rules
    variant = variant_named(rules.variant)
    if seat != state.turn:
        return variant.out_of_turn_actions(state, seat)
    phase = state.phase
    if phase is DRAW:
        return variant.draw_actions(state, seat)
    if phase is not _PLAY:
        return ()
    hand = state.hands[seat]
    actions: list[Command] = []
    taken = state.taken
    if not (rules.discard_draw_must_open and state.took_unopened and not state.opened[seat]):
        going_out_by_discard = len(hand) == 1
        if not (going_out_by_discard and rules.going_out is MELD_ALL):
            discards = _DISCARDS[seat]
            barred = taken if taken is not None and hand.count(taken) == 1 else None  # kalooki / rummy40 D8
            actions = [discards[card] for card in dict.fromkeys(hand) if card is not barred]
    if not state.opened[seat]:
        unopened = variant.unopened_actions(state, seat)
        if unopened is not None:
            actions.extend(unopened)
            return tuple(actions)
    actions.extend(variant.meld_actions(state, seat))
    actions.extend(_table_actions(state, seat, hand))
    return tuple(actions)


_DRAW_CACHE: dict[int, tuple[Command, ...]] = {}


_Layoff = tuple[int, Card, End | None, Meld]  # meld index, card, end, resulting meld
_Swap = tuple[int, Meld, tuple[Card, ...]]  # meld index, meld, the cards that free a joker
_Share = tuple[tuple[_Layoff, ...], tuple[_Swap, ...]]  # one table meld's part of the index


class _TableIndex:
    """The table's single-card layoffs and joker swaps, in the order of a walk over the table.

    `layoffs` and `swaps` go meld by meld, each meld's in `meld_options` order; `shares` holds each
    meld's part, so a changed table redoes only the melds that changed. `by_card` (built when first
    asked) groups the layoffs by card, in the same order, for rummy500 pile picks.
    """

    __slots__ = ("_by_card", "layoffs", "shares", "swaps")

    def __init__(self, shares: tuple[_Share, ...]) -> None:
        self.shares = shares
        self.layoffs = tuple([layoff for share in shares for layoff in share[0]])
        self.swaps = tuple([swap for share in shares for swap in share[1]])
        self._by_card: dict[Card, list[_Layoff]] | None = None

    def by_card(self) -> dict[Card, list[_Layoff]]:
        by_card = self._by_card
        if by_card is None:
            by_card = {}
            for layoff in self.layoffs:
                by_card.setdefault(layoff[1], []).append(layoff)
            self._by_card = by_card  # a race builds the same dict twice; either is right
        return by_card

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _TableIndex) and (self.layoffs, self.swaps) == (other.layoffs, other.swaps)

    __hash__ = None  # type: ignore[assignment]  # compared by content, never a key


_LAST_INDEX: list[tuple[tuple[Meld, ...], Rules, _TableIndex] | None] = [None]


def table_index(melds: tuple[Meld, ...], rules: Rules) -> _TableIndex:
    """`_TableIndex` of `melds`, kept while the table is unchanged and updated when it changes.

    The table tuple survives `evolve` until a meld changes, so identity is a cheap, exact key; the
    entry is read and replaced as one object, so threads never mix two tables. A meld's share
    depends only on its place, the meld and the rules: shares of melds still at their place are
    reused (play appends melds or replaces one; a hypothetical table in `_joker_uses` differs
    in one), and the changed melds' options are memoised per meld (`meld_options`).
    """
    entry = _LAST_INDEX[0]
    if entry is None or entry[1] is not rules:
        index = _full_index(melds, rules)
    elif entry[0] is melds:
        return entry[2]
    else:
        index = _updated_index(entry[0], entry[2], melds, rules)
    _LAST_INDEX[0] = (melds, rules, index)
    return index


def _full_index(melds: tuple[Meld, ...], rules: Rules) -> _TableIndex:
    return _TableIndex(tuple(_meld_share(i, meld, rules) for i, meld in enumerate(melds)))


def _updated_index(
    old: tuple[Meld, ...], index: _TableIndex, melds: tuple[Meld, ...], rules: Rules
) -> _TableIndex:
    """The index of `melds` from that of `old`: the shares of melds still at their place are kept."""
    kept = len(old)
    shares = index.shares
    return _TableIndex(
        tuple(
            shares[i] if i < kept and old[i] is meld else _meld_share(i, meld, rules)
            for i, meld in enumerate(melds)
        )
    )


def _meld_share(meld_index: int, meld: Meld, rules: Rules) -> _Share:
    options = meld_options(meld, rules)
    return (
        tuple((meld_index, card, at, result) for card, at, result in options.layoffs),
        tuple((meld_index, meld, cards) for cards in options.swaps),
    )


# Discard commands are immutable values; building them once per seat and card saves the hot path.
_DISCARDS: Final = tuple({card: Discard(seat, card) for card in CARD_BY_CODE} for seat in range(8))


_LAY_MELD_MEMO: dict[tuple[int, int], tuple[Meld, LayMelds]] = {}


def lay_meld_action(seat: int, meld: Meld) -> LayMelds:
    """The command laying one candidate meld; find_melds memoises melds, so these repeat."""
    key = (seat, id(meld))
    entry = _LAY_MELD_MEMO.get(key)
    if entry is not None and entry[0] is meld:
        return entry[1]
    if len(_LAY_MELD_MEMO) > 100_000:
        _LAY_MELD_MEMO.clear()
    command = LayMelds(seat, (meld.cards,), (meld.kind,))
    _LAY_MELD_MEMO[key] = (meld, command)
    return command


_LAY_OFF_MEMO: dict[tuple[int, int, Card, int], LayOff] = {}


def lay_off_action(seat: int, meld: int, card: Card, at: End | None) -> LayOff:
    """The command laying one card off; a few thousand exist, and a frozen dataclass is slow to build."""
    key = (seat, meld, card, 0 if at is None else 1 if at is _LOW else 2)  # an Enum hashes slowly
    command = _LAY_OFF_MEMO.get(key)
    if command is None:
        command = _LAY_OFF_MEMO[key] = LayOff(seat, meld, (card,), at)
    return command


# Draw commands and the events of drawing and discarding, built once per seat (and card).
DRAW_FROM_STOCK: Final = tuple(DrawFromStock(seat) for seat in range(8))
TAKE_DISCARD: Final = tuple(TakeDiscard(seat) for seat in range(8))
_STOCK_DRAWS: Final = tuple(tuple(CardDrawn(seat, card, False) for card in CARD_BY_CODE) for seat in range(8))
PILE_DRAWS: Final = tuple(tuple(CardDrawn(seat, card, True) for card in CARD_BY_CODE) for seat in range(8))
_DISCARDED: Final = tuple(tuple(CardDiscarded(seat, card) for card in CARD_BY_CODE) for seat in range(8))


def _opens_with(state: GameState, seat: int, card: Card) -> bool:
    """Whether `seat` could open this turn with `card` taken from the discard pile (kalooki D19
    option `must_use_in_opening`), judged as after the take: an opening whose last card left is a
    copy of `card` is no way out, that discard is refused (D8), so the take would leave no move."""
    return bool(openings(state._replace(taken=card), (*state.hands[seat], card), card))


def draw_actions(state: GameState, seat: int) -> tuple[Command, ...]:
    if state.rules.reshuffle is _ALL_BUT_TOP and not state.stock:
        # contract D16: drawing from the empty stock reshuffles (or ends the round).
        return (DrawFromStock(seat), TakeDiscard(seat)) if state.discard else (DrawFromStock(seat),)
    can_take = bool(state.discard)
    if can_take and state.rules.discard_draw_must_open and not state.opened[seat]:
        can_take = _opens_with(state, seat, state.discard[-1])
    key = seat * 4 + bool(state.stock) * 2 + can_take
    actions = _DRAW_CACHE.get(key)
    if actions is None:
        built: list[Command] = []
        if state.stock:
            built.append(DrawFromStock(seat))
        if can_take:
            built.append(TakeDiscard(seat))
        actions = _DRAW_CACHE[key] = tuple(built)
    return actions


def _layoff_actions(state: GameState, seat: int, hand: tuple[Card, ...]) -> list[LayOff]:
    """Single-card layoffs onto every meld the seat may build on, in table order, off the table index."""
    rules = state.rules
    actions: list[LayOff] = []
    short = len(hand) <= 2  # only then can a layoff leave a hand that cannot finish the turn
    owners = state.owners
    others = rules.layoff_on_others
    held = set(hand)
    for meld_index, card, at, result in table_index(state.melds, rules).layoffs:
        if card not in held or (not others and owners[meld_index] != seat):
            continue
        if short:
            try:
                check_rest(state, seat, _without_one(hand, card), _set_at(state.melds, meld_index, result))
            except RuleViolation:
                continue
        actions.append(lay_off_action(seat, meld_index, card, at))
    return actions


def _table_actions(state: GameState, seat: int, hand: tuple[Card, ...]) -> list[Command]:
    """Layoffs (`_layoff_actions`) and joker swaps, read off the table index."""
    actions: list[Command] = list(_layoff_actions(state, seat, hand))
    rules = state.rules
    index = table_index(state.melds, rules)
    if not index.swaps:
        return actions
    in_hand = set(hand)
    for meld_index, meld, cards in index.swaps:
        if not all(card in in_hand for card in cards):
            continue
        use: LayMelds | LayOff | None = None
        if rules.freed_joker_must_be_used:
            swapped = evolve(state, JokerSwapped(seat, meld_index, cards, swap_joker(meld, cards, rules)))
            uses = _joker_uses(swapped, seat)
            if not uses:
                continue
            use = uses[0]
        action = SwapJoker(seat, meld_index, cards, use)
        try:
            decide_command(
                state, action, PROBE
            )  # swaps are rare; checking them whole keeps legal_actions exact
        except RuleViolation:
            continue
        actions.append(action)
    return actions


def _joker_uses(state: GameState, seat: int) -> list[LayMelds | LayOff]:
    hand = state.hands[seat]
    layoffs = _layoff_actions(state, seat, hand)
    uses: list[LayMelds | LayOff] = [a for a in layoffs if JOKER in a.cards]
    for meld in find_melds(hand, state.rules):
        if JOKER in meld.cards:
            uses.append(LayMelds(seat, (meld.cards,), (meld.kind,)))
    return uses
