"""A fast greedy bot for contract rummy, where the meld solver is too slow for 19-card hands.

Contract play is about assembling the round's runs and threes, so the bot plans which suits and
ranks to collect (`keep_scores`) and keeps the cards of its plan, jokers always. It lays down as
soon as it can, lays off whenever it can, buys or takes a card only when it joins the plan, never
buys a penalised fourth time, and discards the card worth least to the plan (the costliest among
equals). After laying down it takes the discard only if it can lay it off (the only way left to
shed a card) and sheds the costliest card.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from rummy_rules.cards import Card
from rummy_rules.commands import (
    BuyDiscard,
    Command,
    Discard,
    DrawFromStock,
    LayMelds,
    LayOff,
    PassBuy,
    SwapJoker,
    TakeDiscard,
)
from rummy_rules.contract_rules import FREE_BUYS, contract_for
from rummy_rules.melds import layoff_targets

if TYPE_CHECKING:
    from rummy_rules.bots import SeatView


def keep_scores(hand: Sequence[Card], runs: int, threes: int) -> dict[Card, int]:
    """How much each card of `hand` is worth keeping for a contract of `runs` runs and `threes` threes.

    A plan: the `runs` suits whose best five-rank window holds the most distinct cards (different
    suits, src ¶16) and the `threes` ranks with the most copies (different ranks, D6). Cards in the
    plan score high, a second copy of a run card low; jokers are kept always.
    """
    # Suits by index ((code - 1) // 13), in order of first appearance; rank bit masks (bit r).
    by_suit: dict[int, int] = {}
    by_rank: dict[int, int] = {}
    for card in hand:
        code = card.code
        if code:
            suit = (code - 1) // 13
            by_suit[suit] = by_suit.get(suit, 0) | 1 << card.rank
            by_rank[card.rank] = by_rank.get(card.rank, 0) + 1
    windows: list[tuple[int, int, int]] = []
    for suit, ranks in by_suit.items():
        positions = ranks | (1 << 14 if ranks & 2 else 0)  # the ace also sits above the king
        counts = [(positions & _WINDOW[low]).bit_count() for low in range(1, 11)]
        best = counts.index(max(counts)) + 1  # the lowest of the best windows
        windows.append((counts[best - 1], best, suit))
    windows.sort(key=lambda window: window[0], reverse=True)
    run_plan = {suit: low for _, low, suit in windows[:runs]}
    three_plan = set(sorted(by_rank, key=lambda rank: -by_rank[rank])[:threes])
    scores: dict[Card, int] = {}
    for card in hand:
        code = card.code
        if not code:
            scores[card] = 100
            continue
        suit = (code - 1) // 13
        count = by_rank[card.rank]
        score = count if threes else 0
        low = run_plan.get(suit)
        position = card.rank if low is None or card.rank != 1 or low < 10 else 14
        if low is not None and low <= position < low + 5:
            score += 10 + (by_suit[suit] & _WINDOW[low]).bit_count()
        if card.rank in three_plan:
            score += 8 + 2 * min(count, 3) if count <= 4 else 4  # more than four copies crowd the hand
        scores[card] = score
    return scores


def _fits_table(card: Card, view: SeatView) -> bool:
    """Whether `card` can be laid off on a table meld: after laying down, anyone's (src ¶20, D8)."""
    rules = view.rules
    return any(card is target for meld in view.melds for target, _ in layoff_targets(meld, rules))


# Bit mask of the five ranks from `low` (index) up: a run window of the plan.
_WINDOW: Final = tuple(0b11111 << low for low in range(15))


def contract_greedy(view: SeatView, actions: Sequence[Command], rng: random.Random) -> Command:
    """Choose among `actions` (the seat's legal actions) as described in the module docstring."""
    if not actions:
        raise ValueError(f"seat {view.seat} has no legal action")
    hand = view.hand
    laid_down = view.opened
    contract = contract_for(view.deal)
    top = view.discard_top

    def helps(card: Card) -> bool:
        with_card = keep_scores((*hand, card), contract.runs, contract.threes)
        return with_card[card] >= 10 and min(with_card.values()) < with_card[card]

    kinds = {type(action): action for action in actions}
    if BuyDiscard in kinds:
        # The cheap tests first: planning the hand with the card is the bot's costliest step.
        wanted = not laid_down and view.buys < FREE_BUYS and top is not None and helps(top)
        return kinds[BuyDiscard] if wanted else kinds[PassBuy]
    if DrawFromStock in kinds or TakeDiscard in kinds:
        if TakeDiscard in kinds and (
            DrawFromStock not in kinds
            or (top is not None and (_fits_table(top, view) if laid_down else helps(top)))
        ):
            return kinds[TakeDiscard]
        return kinds[DrawFromStock]
    lays = [action for action in actions if isinstance(action, LayMelds)]
    if lays:
        return max(lays, key=lambda lay: sum(len(cards) for cards in lay.melds))
    for action in actions:
        if isinstance(action, LayOff | SwapJoker):
            return action
    discards = [action for action in actions if isinstance(action, Discard)]
    if not discards:
        return actions[rng.randrange(len(actions))]
    penalty = view.rules.penalty
    keep = keep_scores(hand, contract.runs, contract.threes)
    copies = {card: hand.count(card) for card in keep}
    scored = [
        # After laying down, melds no longer come from the hand: shed the costliest card.
        (0 if laid_down else keep[action.card] - 5 * (copies[action.card] - 1), -penalty[action.card.rank], i)
        for i, action in enumerate(discards)
    ]
    best = min(scored)[:2]
    ties = [discards[i] for score, cost, i in scored if (score, cost) == best]
    return ties[rng.randrange(len(ties))]
