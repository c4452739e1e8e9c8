"""The deal: the first dealer, the game's first event, dealing the cards, and new or void deals."""

from __future__ import annotations

import hashlib

from rummy_rules.cards import Card, make_deck, seed_commitment, shuffle
from rummy_rules.errors import RuleViolation
from rummy_rules.events import DealEnded, DealStarted, Event, GameStarted, OptionValue
from rummy_rules.secret import Contributed, Seed, deal_seed, shuffle_secret
from rummy_rules.state import DEAL_OVER, DRAW, GameState
from rummy_rules.variant import REGISTRY, rules_for


def first_dealer(seed: bytes, players: int) -> int:
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
        dealer=first_dealer(seed, players) if rules.first_dealer is None else rules.first_dealer,
        deck=deck,
    )


def first_deal(state: GameState, seed: Contributed) -> DealStarted:
    """The first deal of a game whose `GameStarted` came without a deck (it waited for the seats'
    seeds): the deck and first dealer `start` gives, from the mixed seed instead of the server's.
    Its key is deal 1's whatever number the variant gives its first deal (contract `first_round`)."""
    rules = state.rules
    mixed = shuffle_secret(state, seed)
    deck = shuffle(make_deck(rules.packs, rules.jokers), deal_seed(mixed, 1))
    players = len(state.active)
    dealer = first_dealer(mixed, players) if rules.first_dealer is None else rules.first_dealer
    return DealStarted(rules.first_deal, dealer, deck)


def awaiting_deal(state: GameState) -> bool:
    """Whether the game began without a deck and its first deal is still to come (`first_deal`)."""
    return state.deal == 0 and state.phase is DEAL_OVER


def next_seat(active: tuple[bool, ...], seat: int) -> int:
    count = len(active)
    seat = (seat + 1) % count
    while not active[seat]:
        seat = (seat + 1) % count
    return seat


def dealt(state: GameState, deal: int, dealer: int, deck: tuple[Card, ...]) -> GameState:
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
        variant_state=REGISTRY[rules.variant].dealt_state(
            rules, deal, len(hands), upcard[0] if upcard else None
        ),
        penalties=tuple(0 for _ in state.active),
        progressed=False,
        stale_cycles=0,
        turn_idle=True,
        idle_turns=0,
    )


def new_deal(state: GameState, dealer: int, seed: Seed) -> DealStarted:
    rules = state.rules
    deck = shuffle(
        make_deck(rules.packs, rules.jokers), deal_seed(shuffle_secret(state, seed), state.deal + 1)
    )
    return DealStarted(state.deal + 1, dealer, deck)


def void_deal(state: GameState, seed: Seed) -> list[Event]:
    zeros = tuple(0 for _ in state.active)
    return [DealEnded(None, False, zeros), new_deal(state, state.dealer, seed)]
