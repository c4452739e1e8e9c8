"""Shuffle verification: the revealed seed must hash to the commitment and re-derive every deck order.

Pure: given a finished game's events, re-shuffle each deal (`game.deal_seed`) and each stock
reshuffle (`game.reshuffle_seed`) and compare with what the log recorded. Every shuffle uses the
revealed seed mixed with the seats' own seeds (`SeedContributed`, `game.mixed_seed`): the seed itself
when no seat sent one. Reshuffles shuffle the discard pile as it lay then, so the pile is rebuilt by
replaying the events before each one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rummy_contracts.event_format import Logged
from rummy_contracts.facts import Fact, SeedContributed
from rummy_rules.cards import make_deck, seed_commitment, shuffle
from rummy_rules.deal import first_dealer
from rummy_rules.events import DealStarted, GameEnded, GameStarted, StockReshuffled
from rummy_rules.game import deal_seed, evolve, mixed_seed, reshuffle_seed
from rummy_rules.state import GameState
from rummy_rules.variants import Reshuffle


@dataclass(frozen=True, slots=True)
class ShuffleCheck:
    name: str
    seq: int
    matches: bool


@dataclass(frozen=True, slots=True)
class Verification:
    seed: bytes
    seed_commitment: str
    commitment_matches: bool
    shuffles: tuple[ShuffleCheck, ...]
    seat_seeds: tuple[bytes, ...] = ()  # each seat's own seed, b"" for none
    shuffle_seed: bytes = b""  # what every shuffle used: `seed` mixed with `seat_seeds`

    @property
    def verified(self) -> bool:
        return self.commitment_matches and all(check.matches for check in self.shuffles)


def verify_shuffles(logged: Sequence[tuple[int, Logged]]) -> Verification:
    """Check a finished game from its events with their seqs (the log's numbering, which `meldstream
    replay` shows too; the engine's facts are skipped); ValueError when it has not ended (the seed is
    not revealed yet)."""
    numbered = [(seq, event) for seq, event in logged if not isinstance(event, Fact)]
    events = [event for _, event in numbered]
    if not events or not isinstance(events[0], GameStarted):
        raise ValueError("a game history starts with GameStarted")
    ended = next((e for e in events if isinstance(e, GameEnded)), None)
    if ended is None:
        raise ValueError("the game has not ended: its seed is still secret")
    first = events[0]
    seats = [b""] * first.players
    for _, event in logged:
        if isinstance(event, SeedContributed) and event.seat < len(seats):
            seats[event.seat] = event.seed
    seat_seeds = tuple(seats)
    seed = mixed_seed(ended.seed, seat_seeds)
    checks: list[ShuffleCheck] = []
    state: GameState | None = None
    for seq, event in numbered:
        if isinstance(event, GameStarted):
            state = evolve(None, event)
            rules = state.rules
            if event.deck:  # else the first deal waited for the seats' seeds: its DealStarted follows
                expected = shuffle(make_deck(rules.packs, rules.jokers), deal_seed(seed, 1))
                checks.append(ShuffleCheck("deal 1", seq, expected == event.deck))
            continue
        assert state is not None
        if isinstance(event, DealStarted):
            rules = state.rules
            opening = state.deal == 0  # the first deal: key number 1, dealer from the seed
            expected = shuffle(
                make_deck(rules.packs, rules.jokers), deal_seed(seed, 1 if opening else event.deal)
            )
            ok = expected == event.deck
            if opening and rules.first_dealer is None:
                ok = ok and event.dealer == first_dealer(seed, first.players)
            checks.append(ShuffleCheck(f"deal {1 if opening else event.deal}", seq, ok))
        elif isinstance(event, StockReshuffled):
            keep = 0 if state.rules.reshuffle is Reshuffle.ALL_AT_ONCE else 1
            pile = state.discard[: len(state.discard) - keep] if keep else state.discard
            count = state.reshuffles + 1
            # rummy40 D12 may reshuffle including the card being discarded: accept either pile.
            candidates = [pile, state.discard]
            ok = any(shuffle(c, reshuffle_seed(seed, count)) == event.cards for c in candidates)
            checks.append(ShuffleCheck(f"reshuffle {count}", seq, ok))
        state = evolve(state, event)
    revealed = ended.seed
    committed = seed_commitment(revealed) == first.seed_commitment
    return Verification(revealed, first.seed_commitment, committed, tuple(checks), seat_seeds, seed)
