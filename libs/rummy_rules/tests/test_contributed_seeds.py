"""The seats' own seeds: how they mix with the server's, and that a game with none deals as before."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import pytest
from rummy_rules.cards import make_deck, shuffle
from rummy_rules.deal import awaiting_deal, first_deal, first_dealer
from rummy_rules.events import DealStarted, GameEnded
from rummy_rules.game import Contributed, deal_seed, decide, evolve, legal_actions, mixed_seed, start
from rummy_rules.state import Phase
from rummy_rules.variants import PLAYABLE_VARIANTS

SERVER = bytes(range(32))
ANN, BOB = b"a" * 16, bytes(range(64))


def test_no_contribution_leaves_the_servers_seed() -> None:
    assert mixed_seed(SERVER, ()) == SERVER
    assert mixed_seed(SERVER, (b"", b"", b"")) == SERVER


def test_the_mix_hashes_the_seed_then_each_seats_seed_length_prefixed_in_seat_order() -> None:
    framed = SERVER + (16).to_bytes(4, "big") + ANN + (0).to_bytes(4, "big") + (64).to_bytes(4, "big") + BOB
    assert mixed_seed(SERVER, (ANN, b"", BOB)) == hashlib.sha256(framed).digest()
    # Order and framing matter: moving a seed to another seat, or a byte across seats, is another mix.
    mixes = {
        mixed_seed(SERVER, (ANN, b"", BOB)),
        mixed_seed(SERVER, (BOB, b"", ANN)),
        mixed_seed(SERVER, (ANN, BOB, b"")),
        mixed_seed(SERVER, (ANN[:-1], ANN[-1:] + BOB, b"")),
    }
    assert len(mixes) == 4


@pytest.mark.parametrize("variant", PLAYABLE_VARIANTS)
def test_a_game_that_waits_for_seeds_deals_what_start_deals_when_none_came(variant: str) -> None:
    dealt_at_once = start(variant, 3, SERVER)
    waiting = evolve(None, replace(dealt_at_once, deck=()))
    assert awaiting_deal(waiting) and waiting.phase is Phase.DEAL_OVER and not any(waiting.hands)
    assert not any(legal_actions(waiting, seat) for seat in range(3))
    opening = first_deal(waiting, Contributed(SERVER, (b"", b"", b"")))
    assert (opening.deck, opening.dealer) == (dealt_at_once.deck, dealt_at_once.dealer)
    assert evolve(waiting, opening) == evolve(None, dealt_at_once)
    assert not awaiting_deal(evolve(waiting, opening))


def test_contributed_seeds_change_the_first_deal_and_every_later_shuffle_but_not_the_reveal() -> None:
    started = start("rummy40", 3, SERVER, deals_per_match=2)
    waiting = evolve(None, replace(started, deck=()))
    seeds = Contributed(SERVER, (ANN, b"", BOB))
    mixed = mixed_seed(SERVER, seeds.seats)
    opening = first_deal(waiting, seeds)
    rules = waiting.rules
    assert opening.deck == shuffle(make_deck(rules.packs, rules.jokers), deal_seed(mixed, 1))
    assert opening.deck != started.deck
    assert opening.dealer == first_dealer(mixed, 3)
    # A seed that does not match the commitment is refused, contributions or not.
    with pytest.raises(ValueError, match="commitment"):
        first_deal(waiting, Contributed(b"x" * 32, seeds.seats))
    # Played to the end with first legal actions: the next deals use the mix, the reveal is the server's.
    state = evolve(waiting, opening)
    decks, revealed = [opening.deck], None
    for _ in range(5000):
        if state.phase is Phase.GAME_OVER:
            break
        seat = next(s for s in range(3) if legal_actions(state, s))
        for event in decide(state, legal_actions(state, seat)[0], seed=seeds):
            if isinstance(event, DealStarted):
                decks.append(event.deck)
            if isinstance(event, GameEnded):
                revealed = event.seed
            state = evolve(state, event)
    assert state.phase is Phase.GAME_OVER and revealed == SERVER
    for number, deck in enumerate(decks[1:], 2):
        assert deck == shuffle(make_deck(rules.packs, rules.jokers), deal_seed(mixed, number))
