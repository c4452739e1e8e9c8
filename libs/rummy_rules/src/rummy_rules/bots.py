"""Bots that play from what one seat may see: a random-legal bot and a greedy bot on the meld solver.

A bot is a pure function `(view, actions, rng) -> command`: `view` is the seat's own position,
`actions` the seat's `legal_actions`, `rng` a seeded `random.Random` owned by the caller. The same
inputs give the same command, so simulations replay exactly from their seed.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import cache
from typing import Final

from rummy_rules.cards import CARD_BY_CODE, JOKER, SUITS, Card
from rummy_rules.commands import (
    Command,
    Discard,
    DrawFromStock,
    LayMelds,
    LayOff,
    PickFromPile,
    SwapJoker,
    TakeDiscard,
)
from rummy_rules.errors import RuleViolation
from rummy_rules.melds import CARD_AT, End, Meld, MeldKind, lay_off, layoff_targets
from rummy_rules.memo import remember
from rummy_rules.rules import GoingOut, Rules
from rummy_rules.seat_view import Bot, SeatView
from rummy_rules.solver import MeldParams, MeldSolver, solver_for
from rummy_rules.variant import REGISTRY


def random_legal(view: SeatView, actions: Sequence[Command], rng: random.Random) -> Command:
    """Any legal action, uniformly (the benchmark's player, as in the peers' random playouts)."""
    if not actions:
        raise ValueError(f"seat {view.seat} has no legal action")
    # random() * n is uniform to within 2**-53 and several times cheaper than randrange.
    return actions[int(rng.random() * len(actions))]


@cache
def params_for(rules: Rules) -> MeldParams:
    """The solver's meld rules and hand penalties for a variant's `Rules`."""
    joker = rules.penalty[0] if rules.jokers else None
    # Sets keep distinct suits if any set must (kalooki option allow_repeated_suits_in_natural_sets
    # still wants them with jokers, src ¶11): the solver then never proposes an invalid set.
    distinct = rules.natural_set_distinct_suits or rules.joker_set_distinct_suits
    return MeldParams(
        rules.variant,
        (0, *rules.penalty[1:]),
        joker,
        set_min=rules.set_min,
        set_max=rules.set_max or None,  # 0 = no limit (contract threes)
        set_distinct_suits=distinct,
        run_min=rules.run_min,
        ace_low=rules.ace_low_in_runs,
    )


@cache
def _penalties(params: MeldParams) -> dict[Card, int]:
    """Each card's penalty in hand (`penalty_of`) as a table, for sort keys on every decision."""
    return {
        card: params.penalty_of(card)
        for card in CARD_BY_CODE
        if card.code or params.joker_penalty is not None
    }


def _without(hand: Sequence[Card], cards: Sequence[Card]) -> list[Card]:
    rest = list(hand)
    for card in cards:
        rest.remove(card)
    return rest


def greedy(view: SeatView, actions: Sequence[Command], rng: random.Random) -> Command:
    """Play for the least penalty in hand, by the meld solver.

    Draw: take the discard only if it gets melded, i.e. keeping it (and discarding the best other
    card) leaves less penalty than the hand without it plus the card itself as deadwood. Then lay
    the melds that leave the least penalty (never more than now), lay off cards that were left
    over anyway, swap for a joker when the hand then holds less penalty, and discard the card
    whose loss leaves the least penalty (the highest-valued among equals; the rest of a tie by
    `rng`). Where the last card cannot be discarded (rummy40 D11), a hand of one or two cards is
    kept for the most ways to finish instead, or it could wait for ever.
    """
    if not actions:
        raise ValueError(f"seat {view.seat} has no legal action")
    own = REGISTRY[view.rules.variant].own_greedy()
    if own is not None:
        return own(view, actions, rng)
    params = params_for(view.rules)
    solver = solver_for(params)
    hand = view.hand
    kinds = {type(action) for action in actions}  # which passes over the actions can find anything
    if PickFromPile in kinds:
        picks = [action for action in actions if isinstance(action, PickFromPile)]
        # rummy500: a pick scores its meld or layoff at once; take the one that brings the fewest
        # other cards into the hand, if it brings at most two.
        nearest = max(picks, key=lambda pick: pick.index)
        if view.pile_size - nearest.index <= 3:
            return nearest
    if TakeDiscard in kinds or DrawFromStock in kinds:
        take = next((action for action in actions if isinstance(action, TakeDiscard)), None)
        stock = next((action for action in actions if isinstance(action, DrawFromStock)), None)
        top = view.discard_top
        if take is not None and top is not None:
            if stock is None:
                return take
            # Worth taking only if it gets melded: with it, the best hand is better than without
            # it plus its own penalty as deadwood (one such hand is enough to know).
            alone = _least_without(solver, hand, solver.penalty(hand)) + params.penalty_of(top)
            with_top = (*hand, top)
            # Costliest first: a hand less `card` keeps at least its penalty less `card`'s.
            floor = solver.penalty(with_top)
            values = _penalties(params)
            for card in sorted(set(hand), key=values.__getitem__, reverse=True):
                if floor - values[card] >= alone:
                    break
                if solver.penalty(_without(with_top, (card,))) < alone:
                    return take
        assert stock is not None
        return stock
    now = solver.penalty(hand)
    if LayMelds in kinds:
        lays = [action for action in actions if isinstance(action, LayMelds)]
        scored = [
            (solver.penalty(_without(hand, _laid(lay))), -len(_laid(lay)), i) for i, lay in enumerate(lays)
        ]
        left, _, index = min(scored)
        if left <= now:
            return lays[index]
    if LayOff in kinds or SwapJoker in kinds:
        for action in actions:
            if isinstance(action, LayOff) and solver.penalty(_without(hand, action.cards)) < now:
                return action
            if isinstance(action, SwapJoker) and solver.penalty(_after_swap(hand, action)) < now:
                return action
    if Discard not in kinds:
        return actions[rng.randrange(len(actions))]
    discards = [action for action in actions if isinstance(action, Discard)]
    if view.rules.going_out is GoingOut.MELD_ALL and len(hand) <= 3:
        table = _Table(view)
        cards = CARD_BY_CODE if view.rules.jokers else CARD_BY_CODE[1:]
        scores: list[tuple[int, int, int] | None] = []
        for discard in discards:
            rest = _without(hand, (discard.card,))
            outs = _outs(rest, solver, table, cards)
            scores.append((-outs, solver.penalty(rest), -params.penalty_of(discard.card)))
    else:
        scores = _discard_scores(solver, hand, now, discards)
    best = min(score for score in scores if score is not None)
    ties = [discard for discard, score in zip(discards, scores, strict=True) if score == best]
    return ties[rng.randrange(len(ties))]


def _least_without(solver: MeldSolver, hand: Sequence[Card], now: int) -> int:
    """The least penalty of `hand` (whose penalty is `now`) less one of its cards.

    Costliest cards first: a hand less `card` keeps at least `now` less `card`'s penalty (that
    card back as deadwood is a partition of the hand), so once that bound reaches the best so far,
    no cheaper card can do better.
    """
    values = _penalties(solver.params)
    best: int | None = None
    for card in sorted(set(hand), key=values.__getitem__, reverse=True):
        if best is not None and now - values[card] >= best:
            break
        left = solver.penalty(_without(hand, (card,)))
        if best is None or left < best:
            best = left
    if best is None:
        raise ValueError("an empty hand has no card to leave out")
    return best


def _discard_scores(
    solver: MeldSolver, hand: Sequence[Card], now: int, discards: list[Discard]
) -> list[tuple[int, int, int] | None]:
    """Each discard's (0, penalty left, -its penalty), None where it cannot be among the least.

    Costliest first, like `_least_without`; a discard is solved unless its bound already loses to
    the least score so far, so the least score and every discard that ties it are exact.
    """
    values = _penalties(solver.params)
    scores: list[tuple[int, int, int] | None] = [None] * len(discards)
    best: tuple[int, int, int] | None = None
    for index in sorted(range(len(discards)), key=lambda i: values[discards[i].card], reverse=True):
        card = discards[index].card
        value = values[card]
        if best is not None and (0, now - value, -value) > best:
            continue
        score = scores[index] = (0, solver.penalty(_without(hand, (card,))), -value)
        if best is None or score < best:
            best = score
    return scores


def _laid(lay: LayMelds) -> list[Card]:
    return [card for meld in lay.melds for card in meld]


def _after_swap(hand: Sequence[Card], swap: SwapJoker) -> list[Card]:
    """The hand after giving `swap.cards` for a joker and playing what the swap carries."""
    rest = [*_without(hand, swap.cards), JOKER]
    if isinstance(swap.then, LayMelds):
        return _without(rest, _laid(swap.then))
    if isinstance(swap.then, LayOff):
        return _without(rest, swap.then.cards)
    return rest


def _outs(rest: list[Card], solver: MeldSolver, table: _Table, cards: Sequence[Card]) -> int:
    """How many kinds of card among `cards`, drawn next, would let `rest` be melded or laid off completely."""
    melded = _completions(solver, rest)
    reachable = table.reachable(len(rest))
    if not reachable.issuperset(rest):
        return sum(1 for card in cards if card in melded)
    accepted = table.accepted
    # Laying off needs a card the table takes now, and each card within reach of a target.
    rest_accepted = any(card in accepted for card in rest)
    count = 0
    for card in cards:
        if card in melded or (
            (rest_accepted or card in accepted)
            and card in reachable
            and table.lays_off_entirely([*rest, card])
        ):
            count += 1
    return count


def _completions(solver: MeldSolver, rest: list[Card]) -> frozenset[Card]:
    """The cards that, added to `rest`, meld completely: the same for every endgame with this rest.

    Memoised by variant and multiset across games (a hand of two cards waits many turns): the
    endgame's rests hold two cards at most, so a variant has under 1,500 entries; the memo starts
    afresh past `_COMPLETIONS_LIMIT` all the same (services run for days).
    """
    params = solver.params
    key = (params, tuple(sorted(card.code for card in rest)))
    found = _COMPLETIONS.get(key)
    if found is None:
        cards = CARD_BY_CODE if params.joker_penalty is not None else CARD_BY_CODE[1:]
        found = frozenset(card for card in cards if solver.penalty([*rest, card]) == 0)
        remember(_COMPLETIONS, key, found, _COMPLETIONS_LIMIT)
    return found


_COMPLETIONS: Final[dict[tuple[MeldParams, tuple[int, ...]], frozenset[Card]]] = {}
_COMPLETIONS_LIMIT: Final = 1 << 14


class _Table:
    """The melds a seat may lay off onto, with single-card layoffs memoised for one decision.

    The endgame's outs try many pools against the same melds. Memo entries are keyed by the
    meld's id and keep the meld alive, so an id is never reused while its entry exists; grown
    melds come from the memo too, so later pools meet the same objects.
    """

    __slots__ = ("_memo", "_reach", "_rules", "accepted", "takes", "targets")

    def __init__(self, view: SeatView) -> None:
        rules = self._rules = view.rules
        self._memo: dict[int, tuple[Meld, dict[Card, End | None], dict[Card, Meld | None]]] = {}
        self.targets = [
            meld
            for meld, owner in zip(view.melds, view.owners, strict=True)
            if owner == view.seat or rules.layoff_on_others
        ]
        self.takes = [self._entry(meld)[1] for meld in self.targets]
        self.accepted = {card for ends in self.takes for card in ends}
        self._reach: dict[int, frozenset[Card]] = {}

    def reachable(self, spare: int) -> frozenset[Card]:
        """The cards some target could take once `spare` other cards were laid off before them.

        Any card of a set's rank (a joker on it may lift its suit rule), a card of a run's suit
        at most `spare` positions beyond either end (the gap is filled first), and the joker.
        """
        found = self._reach.get(spare)
        if found is None:
            cards = {JOKER}
            for meld in self.targets:
                if meld.kind is MeldKind.SET:
                    cards.update(line[meld.rank] for line in CARD_AT)
                    continue
                assert meld.suit is not None
                line = CARD_AT[SUITS.index(meld.suit)]
                for position in (
                    *range(meld.rank - 1 - spare, meld.rank),
                    *range(meld.high + 1, meld.high + 2 + spare),
                ):
                    if 1 <= position <= 14:
                        cards.add(line[position])
            found = self._reach[spare] = frozenset(cards)
        return found

    def lays_off_entirely(self, pool: list[Card]) -> bool:
        """Can every card in `pool` be laid off, one after another, onto the targets?"""
        melds = list(self.targets)
        takes = list(self.takes)
        left = list(pool)
        progress = True
        while left and progress:
            progress = False
            for card in list(left):
                for index, ends in enumerate(takes):
                    if card not in ends:
                        continue
                    grown = self._laid_off(melds[index], card)
                    if grown is not None:
                        melds[index] = grown
                        takes[index] = self._entry(grown)[1]
                        left.remove(card)
                        progress = True
                        break
        return not left

    def _entry(self, meld: Meld) -> tuple[Meld, dict[Card, End | None], dict[Card, Meld | None]]:
        """`meld`, the cards it takes (each with the first end `layoff_targets` lists), its layoffs."""
        entry = self._memo.get(id(meld))
        if entry is None or entry[0] is not meld:
            ends: dict[Card, End | None] = {}
            for target, end in layoff_targets(meld, self._rules):
                ends.setdefault(target, end)  # the first end listed for a card is the one tried
            entry = self._memo[id(meld)] = (meld, ends, {})
        return entry

    def _laid_off(self, meld: Meld, card: Card) -> Meld | None:
        """`meld` with `card` laid off at the first end that names it, or None if that fails."""
        _, ends, grown = self._entry(meld)
        if card in grown:
            return grown[card]
        result = None
        if card in ends:
            try:
                result = lay_off(meld, (card,), self._rules, ends[card])
            except RuleViolation:
                result = None
        grown[card] = result
        return result


BOTS: dict[str, Bot] = {"random": random_legal, "greedy": greedy}
