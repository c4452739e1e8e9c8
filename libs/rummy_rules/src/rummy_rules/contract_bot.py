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
from rummy_rules.melds import Meld, layoff_targets
from rummy_rules.memo import remember

if TYPE_CHECKING:
    from rummy_rules.rules import Rules
    from rummy_rules.seat_view import SeatView


def keep_scores(hand: Sequence[Card], runs: int, threes: int) -> dict[Card, int]:
    """How much each card of `hand` is worth keeping for a contract of `runs` runs and `threes` threes.

    A plan: the `runs` suits whose best five-rank window holds the most distinct cards (different
    suits, src ¶16) and the `threes` ranks with the most copies (different ranks, D6). Cards in the
    plan score high, a second copy of a run card low; jokers are kept always.
    """
    return _Plan(hand, runs, threes).scores(hand)


class _Plan:
    """The plan of `keep_scores` for one hand, which scores any of its cards."""

    __slots__ = ("_counts", "_run_plan", "_three_plan", "_threes")

    def __init__(self, hand: Sequence[Card], runs: int, threes: int) -> None:
        # Rank masks (bit r) per suit index and copies per rank, with the suits and ranks in order
        # of first appearance: the plan's ties go to the earlier one.
        masks = [0, 0, 0, 0]
        suits: list[int] = []
        counts = [0] * 14
        ranks: list[int] = []
        for card in hand:
            code = card.code
            if code:
                suit = _SUIT_OF[code]
                if not masks[suit]:
                    suits.append(suit)
                masks[suit] |= _RANK_BIT[code]
                rank = card.rank
                if not counts[rank]:
                    ranks.append(rank)
                counts[rank] += 1
        run_plan: list[tuple[int, int] | None] = [None, None, None, None]
        if runs:
            windows = [(*_best_window(masks[suit]), suit) for suit in suits]
            windows.sort(key=lambda window: window[0], reverse=True)
            for _, low, suit in windows[:runs]:
                # Its cards inside the window score 10 plus the window's cards (the ace above the
                # king not counted: the mask has no bit 14).
                run_plan[suit] = (low, 10 + (masks[suit] & _WINDOW[low]).bit_count())
        self._counts = counts
        self._run_plan = run_plan
        self._three_plan = set(sorted(ranks, key=lambda rank: -counts[rank])[:threes]) if threes else set()
        self._threes = threes

    def scores(self, cards: Sequence[Card]) -> dict[Card, int]:
        """What keeping each of `cards` (the hand's) is worth to the plan."""
        counts = self._counts
        run_plan = self._run_plan
        three_plan = self._three_plan
        scores: dict[Card, int] = {}
        for card in cards:
            if card in scores:
                continue  # copies score alike
            code = card.code
            if not code:
                scores[card] = 100
                continue
            rank = card.rank
            count = counts[rank]
            score = count if self._threes else 0
            plan = run_plan[_SUIT_OF[code]]
            if plan is not None:
                low = plan[0]
                position = 14 if rank == 1 and low >= 10 else rank
                if low <= position < low + 5:
                    score += plan[1]
            if rank in three_plan:
                score += 8 + 2 * min(count, 3) if count <= 4 else 4  # more than four copies crowd the hand
            scores[card] = score
        return scores


def _best_window(ranks: int) -> tuple[int, int]:
    """(cards, lowest rank) of the best five-rank window of a suit's rank mask (the lowest of ties)."""
    best = _BEST_WINDOWS.get(ranks)
    if best is None:
        positions = ranks | (1 << 14 if ranks & 2 else 0)  # the ace also sits above the king
        counts = [(positions & _WINDOW[low]).bit_count() for low in range(1, 11)]
        low = counts.index(max(counts)) + 1
        best = _BEST_WINDOWS[ranks] = (counts[low - 1], low)
    return best


# Memo of `_best_window` by rank mask: at most 2**13 masks.
_BEST_WINDOWS: Final[dict[int, tuple[int, int]]] = {}
# Per card code (0 the joker): its suit index and its rank's bit.
_SUIT_OF: Final = (-1, *((code - 1) // 13 for code in range(1, 53)))
_RANK_BIT: Final = (0, *(1 << ((code - 1) % 13 + 1) for code in range(1, 53)))


def _fits_table(card: Card, view: SeatView) -> bool:
    """Whether `card` can be laid off on a table meld: after laying down, anyone's (src ¶20, D8)."""
    rules = view.rules
    return any(card in _targets(meld, rules) for meld in view.melds)


def _targets(meld: Meld, rules: Rules) -> frozenset[Card]:
    """The cards `layoff_targets` lists for a table meld, memoised by identity (melds outlive turns).

    An entry keeps its meld alive, so its id is not reused while the entry exists.
    """
    entry = _TARGETS.get(id(meld))
    if entry is None or entry[0] is not meld or entry[1] is not rules:
        entry = remember(
            _TARGETS,
            id(meld),
            (meld, rules, frozenset(card for card, _ in layoff_targets(meld, rules))),
            _TARGETS_LIMIT,
        )
    return entry[2]


_TARGETS: Final[dict[int, tuple[Meld, Rules, frozenset[Card]]]] = {}
_TARGETS_LIMIT: Final = 4096  # entries before the memo starts afresh: bounded memory in services


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
        """Whether `card` joins the plan of the hand with it, and some card of the hand is worth less."""
        plan = _Plan((*hand, card), contract.runs, contract.threes)
        score = plan.scores((card,))[card]
        return score >= 10 and min(plan.scores(hand).values()) < score

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
    # `kinds` says which passes over the actions can find anything.
    if LayMelds in kinds:
        lays = [action for action in actions if isinstance(action, LayMelds)]
        return max(lays, key=lambda lay: sum(len(cards) for cards in lay.melds))
    if LayOff in kinds or SwapJoker in kinds:
        return next(action for action in actions if isinstance(action, (LayOff, SwapJoker)))
    if Discard not in kinds:
        return actions[rng.randrange(len(actions))]
    discards = [action for action in actions if isinstance(action, Discard)]
    penalty = view.rules.penalty
    if laid_down:
        # After laying down, melds no longer come from the hand: shed the costliest card.
        scored = [(0, -penalty[action.card.rank], i) for i, action in enumerate(discards)]
    else:
        keep = keep_scores(hand, contract.runs, contract.threes)
        copies: dict[Card, int] = {}
        for card in hand:
            copies[card] = copies.get(card, 0) + 1
        scored = [
            (keep[action.card] - 5 * (copies[action.card] - 1), -penalty[action.card.rank], i)
            for i, action in enumerate(discards)
        ]
    best = min(scored)[:2]
    ties = [discards[i] for score, cost, i in scored if (score, cost) == best]
    return ties[rng.randrange(len(ties))]
