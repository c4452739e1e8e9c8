"""Checks every turn shares: the phase, the cards in hand, the table meld named, and whether the
hand left could still finish the turn."""

from __future__ import annotations

from collections.abc import Sequence

from rummy_rules.cards import Card
from rummy_rules.errors import RuleViolation
from rummy_rules.melds import Meld, meld_options
from rummy_rules.rules import DISCARD_REQUIRED, MELD_ALL, Rules
from rummy_rules.state import DRAW, GameState, Phase


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


def need_phase(state: GameState, phase: Phase) -> None:
    if state.phase is not phase:
        rules = state.rules
        if phase is DRAW:
            raise RuleViolation("already_drawn", "you have already drawn this turn", rules.cite("draw"))
        raise RuleViolation("must_draw_first", "draw a card first", rules.cite("draw"))


def table_meld(state: GameState, index: int, seat: int, action: str) -> Meld:
    rules = state.rules
    if rules.open_before_layoff and not state.opened[seat]:
        raise RuleViolation("not_opened", f"you must open before you {action}", rules.cite("open_first"))
    if type(index) is not int or not 0 <= index < len(state.melds):
        raise RuleViolation("no_such_meld", f"there is no table meld {index!r}", rules.cite("layoff"))
    return state.melds[index]
