"""The turn's commands: one handler per command type, returning the events it causes.

`decide_command` looks the handler up in the variant's table (`Variant.handlers`: `HANDLERS` plus
the variant's own) after the checks every command shares (game over, seat, turn).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from rummy_rules.cards import CARD_BY_CODE, JOKER, Card
from rummy_rules.checks import check_rest, need_phase, table_meld, take
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
from rummy_rules.deal import void_deal
from rummy_rules.deal_end import deal_over, end_stalled_deal
from rummy_rules.errors import RuleViolation
from rummy_rules.events import (
    BuyGranted,
    BuyPassed,
    CardDiscarded,
    CardDrawn,
    CardsLaidOff,
    DealEnded,
    Event,
    JokerSwapped,
    MeldsLaid,
    StockReshuffled,
)
from rummy_rules.evolve import evolve, evolved, set_at, without_one
from rummy_rules.handlers import Entry, handles
from rummy_rules.melds import SET, End, Meld, MeldKind, lay_off, make_meld, meld_options, shared, swap_joker
from rummy_rules.memo import remember
from rummy_rules.openings import opens_with
from rummy_rules.out_of_turn import OUT_OF_TURN
from rummy_rules.rules import ALL_AT_ONCE, END_IMMEDIATELY, KEEP_LAST_DISCARD, MELD_ALL, Rules
from rummy_rules.secret import Seed
from rummy_rules.stalemate import idle_stalemate
from rummy_rules.state import DEAL_OVER, DRAW, GAME_OVER, PLAY, SEATS, GameState, others_may_act
from rummy_rules.stock import rebuild, refill
from rummy_rules.variant import REGISTRY


def decide_command(state: GameState, command: Command, seed: Seed) -> list[Event]:
    """`decide` with a seed that may be `PROBE` (legal_actions' dry runs)."""
    rules = state.rules
    entry = REGISTRY[rules.variant].handlers.get(type(command))
    if entry is None:
        raise RuleViolation("unknown_command", f"not a command: {type(command).__name__}", rules.cite("turn"))
    seat = command.seat
    if state.phase is GAME_OVER:
        raise RuleViolation("game_over", "the game is over; nobody may act", rules.cite("over"))
    if state.phase is DEAL_OVER:  # the seats' seeds awaited before the first deal, or between deals
        raise RuleViolation(
            "no_deal", "no deal is in play: wait for the next one to be dealt", rules.cite("turn")
        )
    if type(seat) is not int or not 0 <= seat < rules.players:
        raise RuleViolation("bad_seat", f"no seat {seat!r} at this table", rules.cite("turn"))
    if seat != state.turn and type(command) not in OUT_OF_TURN:
        raise RuleViolation("not_your_turn", f"it is seat {state.turn}'s turn", rules.cite("turn"))
    phase, handler = entry
    if phase is not None and state.phase is not phase:
        need_phase(state, phase)
    return handler(state, command, seed)


def _draw_stock(state: GameState, command: DrawFromStock, seed: Seed) -> list[Event]:
    events: list[Event] = []
    if others_may_act(state):
        # contract D12: the forehand draws from the stock, so the first buy request is granted now,
        # before the forehand's card (or the offer lapses).
        events = REGISTRY[state.rules.variant].close_offer(state, seed, taken_by_forehand=False)
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
    if len(state.stock) == 1 and state.rules.reshuffle is ALL_AT_ONCE and state.discard:
        # rummy40 D12: as soon as the last stock card is drawn, every face-up card becomes the stock.
        events.extend(rebuild(evolve(state, drawn), state.discard, seed))
    return events


def take_discard(state: GameState, command: TakeDiscard, seed: Seed) -> list[Event]:
    rules = state.rules
    if not state.discard:
        raise RuleViolation("discard_pile_empty", "the discard pile is empty", rules.cite("draw"))
    card = state.discard[-1]
    seat = command.seat
    if not state.stock and rules.reshuffle is END_IMMEDIATELY:
        # rummy500 option end_immediately: an empty stock ends the deal at the next draw (D10).
        raise RuleViolation("stock_empty", "the stock is empty: the deal is over", rules.cite("reshuffle"))
    if others_may_act(state):  # contract §3.7.1: the forehand's first right ends the offer
        closed = REGISTRY[rules.variant].close_offer(state, seed, taken_by_forehand=True)
        return [*closed, PILE_DRAWS[seat][card.code]]
    if rules.discard_draw_must_open and not state.opened[seat] and not opens_with(state, seat, card):
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


_MADE_MELDS: Final[dict[tuple[tuple[Card, ...], int], tuple[Rules, Meld]]] = {}


def _made_meld(cards: Sequence[Card], rules: Rules, kind: MeldKind | None) -> Meld:
    """`make_meld`, memoised per cards and kind (for the rules last seen with them): the same meld laid
    again is the same object, so its `meld_options` (memoised per meld) are known on the table."""
    if type(cards) is not tuple:
        return shared(make_meld(cards, rules, kind))
    key = (cards, 0 if kind is None else 1 if kind is SET else 2)  # an Enum hashes slowly
    entry = _MADE_MELDS.get(key)
    if entry is not None and entry[0] is rules:
        return entry[1]
    meld = shared(make_meld(cards, rules, kind))
    remember(_MADE_MELDS, key, (rules, meld))
    return meld


def _lay_melds(state: GameState, command: LayMelds, seed: Seed) -> list[Event]:
    seat = command.seat
    melds, rest = REGISTRY[state.rules.variant].lay_melds(state, command)
    check_rest(state, seat, rest, state.melds + melds)
    events: list[Event] = [MeldsLaid(seat, melds)]
    if not rest:
        events.extend(deal_over(evolved(state, events), seed, seat, kalooki=False))
    return events


def _lay_off(state: GameState, command: LayOff, seed: Seed) -> list[Event]:
    rules = state.rules
    seat = command.seat
    meld = table_meld(state, command.meld, seat, "lay off")
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
    check_rest(state, seat, rest, set_at(state.melds, command.meld, result))
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
    return shared(lay_off(meld, cards, rules, at))


def _swap(state: GameState, command: SwapJoker, seed: Seed) -> list[Event]:
    rules = state.rules
    seat = command.seat
    meld = table_meld(state, command.meld, seat, "take a joker")
    take(state, seat, command.cards)
    result = shared(swap_joker(meld, command.cards, rules))
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
    rules = state.rules
    seat = command.seat
    card = command.card
    hand = state.hands[seat]
    if card not in hand:
        take(state, seat, (card,))  # raises the precise refusal
    rest = without_one(hand, card)
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
        kalooki = REGISTRY[rules.variant].going_out_bonus(state)
        events.extend(deal_over(evolved(state, events), seed, seat, kalooki=kalooki))
        return events
    if idle_stalemate(state):
        events.extend(end_stalled_deal(evolved(state, events), seed))
        return events
    variant = REGISTRY[rules.variant]
    if variant.buys:
        offer = variant.offer_discard(state, seat, card)
        if offer is not None:
            events.append(offer)
    if not state.stock:
        if rules.reshuffle is KEEP_LAST_DISCARD:
            # kalooki D18: after the turn that drew the last card, all but the new discard is the stock.
            if not state.discard:
                events.extend(void_deal(state, seed))  # kalooki §3.11.3
            else:
                events.extend(rebuild(evolved(state, events), state.discard, seed))
        elif rules.reshuffle is ALL_AT_ONCE:
            # rummy40 D12 when the pile was empty as the last card was drawn: reshuffle as soon as
            # face-up cards exist, so the next player can draw from the stock.
            events.extend(rebuild(evolved(state, events), (*state.discard, card), seed))
    return events


def _go_out(state: GameState, command: GoOut, seed: Seed) -> list[Event]:
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
        if current.phase is not PLAY:
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


def _no_deep_pick(state: GameState, command: PickFromPile, seed: Seed) -> list[Event]:
    rules = state.rules
    raise RuleViolation(
        "no_deep_pick", f"in {rules.variant} only the top discard can be taken", rules.cite("draw")
    )


def _no_buying(state: GameState, command: BuyDiscard | PassBuy, seed: Seed) -> list[Event]:
    rules = state.rules
    raise RuleViolation("no_buying", f"there is no buying in {rules.variant}", rules.cite("draw"))


# The shared commands' handlers; a variant adds or replaces some (`Variant.handlers`).
_ENTRIES = (
    handles(DrawFromStock, _draw_stock, DRAW),
    handles(TakeDiscard, take_discard, DRAW),
    handles(LayMelds, _lay_melds, PLAY),
    handles(LayOff, _lay_off, PLAY),
    handles(SwapJoker, _swap, PLAY),
    handles(Discard, _discard, PLAY),
    handles(GoOut, _go_out, PLAY),
    handles(PickFromPile, _no_deep_pick, DRAW),
    handles(BuyDiscard, _no_buying, None),
    handles(PassBuy, _no_buying, None),
)
HANDLERS: Final[dict[type[Command], Entry]] = dict(_ENTRIES)


# The events of drawing and discarding, built once per seat and card: a frozen dataclass is slow to build.
_STOCK_DRAWS: Final = tuple(tuple(CardDrawn(seat, card, False) for card in CARD_BY_CODE) for seat in SEATS)
PILE_DRAWS: Final = tuple(tuple(CardDrawn(seat, card, True) for card in CARD_BY_CODE) for seat in SEATS)
_DISCARDED: Final = tuple(tuple(CardDiscarded(seat, card) for card in CARD_BY_CODE) for seat in SEATS)
