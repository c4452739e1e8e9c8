"""Answers rule-vector cases (../shared/rules/vectors/FORMAT.md) from the engine's own functions.

Table situations (layoffs, swaps, openings, going out) are answered by building the described
position as a `GameState` and asking `game.decide`, so the vectors test the same code path a game
uses. Kinds of variants whose play is not implemented yet answer an error, never a guess.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from rummy_rules.cards import JOKER, STANDARD_PACK, Card, CardError, parse_card, parse_cards
from rummy_rules.commands import GoOut, LayMelds, LayOff, SwapJoker
from rummy_rules.errors import RuleViolation
from rummy_rules.events import CardsLaidOff, DealEnded, Event, JokerSwapped, MeldsLaid
from rummy_rules.game import decide
from rummy_rules.melds import End, Meld, MeldKind, make_meld, meld_value
from rummy_rules.scoring import loser_penalty, match_winners, prize_split
from rummy_rules.state import GameState, Phase
from rummy_rules.variants import Rules, rules_for

Case = dict[str, Any]
_TABLE_SIZE: Final = 4  # vectors assume the default options; 4 players = two packs for rummy40 (D1)


def answer(case: Case) -> dict[str, Any]:
    """Answer one case; a case the engine cannot decide gets an error, never a guess."""
    case_id = case.get("id")
    variant, kind = case.get("variant"), case.get("kind")
    handler = _KINDS.get((str(variant), str(kind)))
    if handler is None:
        return {"id": case_id, "error": f"kind {kind!r} of {variant!r} is not implemented"}
    try:
        rules = rules_for(str(variant), _TABLE_SIZE)
        return {"id": case_id, **handler(case, rules)}
    except CardError as exc:
        return {"id": case_id, "error": str(exc)}
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return {"id": case_id, "error": f"malformed case: {exc!r}"}


def _kind(case: Case, index: int | None = None) -> MeldKind | None:
    given = case.get("type")
    if isinstance(given, list):
        given = given[index] if index is not None and index < len(given) else None
    return MeldKind(given) if given else None


def _cards(value: Any) -> tuple[Card, ...]:
    if not isinstance(value, list):
        raise TypeError(f"expected a list of cards, got {value!r}")
    return parse_cards(value)


def _meld(case: Case, rules: Rules) -> dict[str, Any]:
    try:
        meld = make_meld(_cards(case["cards"]), rules, _kind(case))
    except (RuleViolation, CardError):
        return {"valid": False}
    return {"valid": True, "value": meld_value(meld, rules)}


def _fillers(avoid: Sequence[Card], count: int) -> list[Card]:
    """Cards to pad a hand with that play no part in the question (not in it, not adjacent)."""
    used = set(avoid)
    return [card for card in reversed(STANDARD_PACK) if card not in used][:count]


def _joker_use(avoid: Sequence[Card]) -> list[Card]:
    """Two consecutive cards of one suit, unrelated to the case, that a freed joker completes."""
    used = set(avoid)
    for suit_start in range(0, 52, 13):
        for offset in range(1, 10):
            low, high = STANDARD_PACK[suit_start + offset], STANDARD_PACK[suit_start + offset + 1]
            near = {STANDARD_PACK[suit_start + offset - 1], STANDARD_PACK[suit_start + offset + 2]}
            if not {low, high, *near} & used:
                return [low, high]
    raise ValueError("no free cards")


def _position(
    rules: Rules,
    hand: Sequence[Card],
    opened: bool,
    table: Sequence[tuple[Meld, int]] = (),
) -> GameState:
    """Seat 0 to play (drawn already) with `hand`; `table` melds with their owners."""
    players = rules.players
    others = tuple(STANDARD_PACK[:13] for _ in range(players - 1))
    return GameState(
        rules=rules,
        seed=b"conformance-position",
        seed_commitment="",
        deal=1,
        dealer=players - 1,
        hands=(tuple(hand), *others),
        stock=STANDARD_PACK[13:33],
        discard=(STANDARD_PACK[40],),
        melds=tuple(meld for meld, _ in table),
        owners=tuple(owner for _, owner in table),
        opened=(opened, *(True for _ in others)),
        turn=0,
        phase=Phase.PLAY,
        taken=None,
        turn_start_opened=opened,
        extended=False,
        took_unopened=False,
        active=tuple(True for _ in range(players)),
        totals=tuple(0 for _ in range(players)),
        penalties=tuple(0 for _ in range(players)),
        deals_done=0,
        reshuffles=0,
        winners=(),
        payouts=(),
    )


def _initial_meld(case: Case, rules: Rules) -> dict[str, Any]:
    try:
        melds = [make_meld(_cards(cards), rules, _kind(case, i)) for i, cards in enumerate(case["melds"])]
    except (RuleViolation, CardError):
        return {"valid": False, "value": None}
    value = sum(meld_value(meld, rules) for meld in melds)
    used = [card for meld in melds for card in meld.cards]
    # A Kalooki turn keeps exactly one card for the discard; otherwise the player keeps more.
    kalooki = bool(case.get("context", {}).get("kalooki")) and rules.variant == "kalooki"
    hand = used + _fillers(used, 1 if kalooki else 2)
    command = LayMelds(0, tuple(meld.cards for meld in melds), tuple(meld.kind for meld in melds))
    try:
        decide(_position(rules, hand, opened=False), command)
    except RuleViolation:
        return {"valid": False, "value": value}
    return {"valid": True, "value": value}


def _owner(context: dict[str, Any]) -> int:
    return 1 if context.get("owner") == "other" else 0


def _layoff(case: Case, rules: Rules) -> dict[str, Any]:
    context = case.get("context", {})
    try:
        meld = make_meld(_cards(case["meld"]), rules, _kind(case))
        cards = _cards(case["cards"])
    except (RuleViolation, CardError):
        return {"valid": False}
    at = End(case["at"]) if case.get("at") else None
    hand = [*cards, *_fillers([*cards, *meld.cards], 2)]
    state = _position(rules, hand, bool(context.get("opened")), [(meld, _owner(context))])
    try:
        events = decide(state, LayOff(0, 0, cards, at))
    except RuleViolation:
        return {"valid": False}
    laid = next(event for event in events if isinstance(event, CardsLaidOff))
    return {"valid": True, "result": [card.text for card in laid.result.cards]}


def _joker_swap(case: Case, rules: Rules) -> dict[str, Any]:
    context = case.get("context", {})
    try:
        meld = make_meld(_cards(case["meld"]), rules, _kind(case))
        cards = _cards(case["cards"])
    except (RuleViolation, CardError):
        return {"valid": False}
    use = _joker_use([*cards, *meld.cards])
    hand = [*cards, *use, *_fillers([*cards, *meld.cards, *use], 2)]
    state = _position(rules, hand, bool(context.get("opened")), [(meld, _owner(context))])
    # Kalooki D10: a release carries the use of the freed joker; here a run the joker completes.
    then = LayMelds(0, ((*use, JOKER),), (MeldKind.RUN,)) if rules.freed_joker_must_be_used else None
    try:
        events = decide(state, SwapJoker(0, 0, cards, then))
    except RuleViolation:
        return {"valid": False}
    swapped = next(event for event in events if isinstance(event, JokerSwapped))
    return {"valid": True, "freed": JOKER.text, "result": [card.text for card in swapped.result.cards]}


def _hand_penalty(case: Case, rules: Rules) -> dict[str, Any]:
    kalooki = bool(case.get("context", {}).get("winner_kalooki"))
    return {"penalty": loser_penalty(_cards(case["cards"]), rules, kalooki)}


def _going_out(case: Case, rules: Rules) -> dict[str, Any]:
    context = case.get("context", {})
    try:
        hand = _cards(case["hand"])
        melds = tuple(_cards(cards) for cards in case.get("melds", []))
        table: list[tuple[Meld, int]] = []
        layoffs = []
        for index, layoff in enumerate(case.get("layoffs", [])):
            table.append((make_meld(_cards(layoff["meld"]), rules), _owner(layoff)))
            at = End(layoff["at"]) if layoff.get("at") else None
            layoffs.append(LayOff(0, index, _cards(layoff["cards"]), at))
        discard = parse_card(case["discard"]) if case.get("discard") else None
    except (RuleViolation, CardError):
        return {"valid": False}
    kinds = tuple(_kind(case, i) for i in range(len(melds)))
    state = _position(rules, hand, bool(context.get("opened_before")), table)
    command = GoOut(0, melds, kinds, tuple(layoffs), discard)
    try:
        events: list[Event] = decide(state, command)
    except RuleViolation:
        return {"valid": False}
    ended = next(event for event in events if isinstance(event, DealEnded))
    out: dict[str, Any] = {"valid": True}
    if rules.variant == "kalooki":
        out["kalooki"] = ended.kalooki and any(isinstance(event, MeldsLaid) for event in events)
    return out


def _prize_split(case: Case, rules: Rules) -> dict[str, Any]:
    penalties = {str(player): int(points) for player, points in case["penalties"].items()}
    return {"result": prize_split(int(case["pool"]), str(case["winner"]), penalties, rules)}


def _match_result(case: Case, _rules: Rules) -> dict[str, Any]:
    totals = {str(player): int(points) for player, points in case["penalties"].items()}
    return {"winners": sorted(match_winners(totals))}


_KINDS: Final[dict[tuple[str, str], Callable[[Case, Rules], dict[str, Any]]]] = {
    **{(variant, "meld"): _meld for variant in ("kalooki", "rummy40")},
    **{(variant, "initial_meld"): _initial_meld for variant in ("kalooki", "rummy40")},
    **{(variant, "layoff"): _layoff for variant in ("kalooki", "rummy40")},
    **{(variant, "joker_swap"): _joker_swap for variant in ("kalooki", "rummy40")},
    **{(variant, "hand_penalty"): _hand_penalty for variant in ("kalooki", "rummy40")},
    **{(variant, "going_out"): _going_out for variant in ("kalooki", "rummy40")},
    ("kalooki", "prize_split"): _prize_split,
    ("rummy40", "match_result"): _match_result,
}
