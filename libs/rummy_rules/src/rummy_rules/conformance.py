"""Answers rule-vector cases (tools/conformance/vectors/FORMAT.md) from the engine's own functions.

Table situations (layoffs, swaps, openings, going out, contracts, buys, discard-pile picks) are
answered by building the described position as a `GameState` and asking `game.decide`, so the
vectors test the same code path a game uses. Pure questions (scores, game ends, disputes, table
rotation) go to the same functions the game calls. A case the engine cannot decide answers an
error, never a guess.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from rummy_rules.cards import JOKER, STANDARD_PACK, Card, CardError, parse_card, parse_cards, seed_commitment
from rummy_rules.commands import BuyDiscard, DrawFromStock, GoOut, LayMelds, LayOff, PickFromPile, SwapJoker
from rummy_rules.contract_rules import ROUNDS, dispute_winner, round_penalty
from rummy_rules.contract_state import ContractState
from rummy_rules.errors import RuleViolation
from rummy_rules.events import BuyGranted, CardDrawn, CardsLaidOff, DealEnded, Event, JokerSwapped, MeldsLaid
from rummy_rules.game import decide, evolve
from rummy_rules.melds import End, Meld, MeldKind, hand_penalty, lay_off, make_meld, meld_value
from rummy_rules.rummy500_rules import game_winner, layoff_credit, settlement
from rummy_rules.scoring import loser_penalty, match_winners, prize_split
from rummy_rules.state import GameState, Phase
from rummy_rules.tables import rotate_tables
from rummy_rules.variants import Rules, rules_for

Case = dict[str, Any]
_TABLE_SIZE: Final = 4  # vectors assume the default options; 4 players = two packs for rummy40 (D1)
_SEED: Final = b"conformance-position"  # orders the deal a going out may start; never asked about


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


def _contract_meld(case: Case, rules: Rules) -> dict[str, Any]:
    # Contract melds carry no value; a group of one natural card and jokers is valid read either way.
    kind = _kind(case)
    try:
        cards = _cards(case["cards"])
        readings = [kind] if kind is not None else [MeldKind.SET, MeldKind.RUN]
    except CardError:
        return {"valid": False}
    for reading in readings:
        try:
            make_meld(cards, rules, reading)
        except RuleViolation:
            continue
        return {"valid": True}
    return {"valid": False}


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
    *,
    deal: int = 1,
    phase: Phase = Phase.PLAY,
    discard: Sequence[Card] = (STANDARD_PACK[40],),
) -> GameState:
    """Seat 0 to play (drawn already, unless `phase` is DRAW) with `hand`; `table` melds with owners."""
    players = rules.players
    others = tuple(STANDARD_PACK[:13] for _ in range(players - 1))
    return GameState(
        rules=rules,
        seed_commitment=seed_commitment(_SEED),
        deal=deal,
        dealer=players - 1,
        hands=(tuple(hand), *others),
        stock=STANDARD_PACK[13:33],
        discard=tuple(discard),
        melds=tuple(meld for meld, _ in table),
        owners=tuple(owner for _, owner in table),
        opened=(opened, *(True for _ in others)),
        turn=0,
        phase=phase,
        taken=None,
        turn_start_opened=opened,
        extended=False,
        took_unopened=False,
        credits=tuple((owner,) * len(meld.cards) for meld, owner in table),
        active=tuple(True for _ in range(players)),
        totals=tuple(0 for _ in range(players)),
        penalties=tuple(0 for _ in range(players)),
        deals_done=0,
        reshuffles=0,
        winners=(),
        payouts=(),
    )


def _initial_meld(case: Case, rules: Rules, kalooki_turns: bool = False) -> dict[str, Any]:
    try:
        melds = [make_meld(_cards(cards), rules, _kind(case, i)) for i, cards in enumerate(case["melds"])]
    except (RuleViolation, CardError):
        return {"valid": False, "value": None}
    value = sum(meld_value(meld, rules) for meld in melds)
    used = [card for meld in melds for card in meld.cards]
    # A Kalooki turn keeps exactly one card for the discard; otherwise the player keeps more.
    kalooki = bool(case.get("context", {}).get("kalooki")) and kalooki_turns
    hand = used + _fillers(used, 1 if kalooki else 2)
    command = LayMelds(0, tuple(meld.cards for meld in melds), tuple(meld.kind for meld in melds))
    try:
        decide(_position(rules, hand, opened=False), command, seed=_SEED)
    except RuleViolation:
        return {"valid": False, "value": value}
    return {"valid": True, "value": value}


def _kalooki_initial_meld(case: Case, rules: Rules) -> dict[str, Any]:
    return _initial_meld(case, rules, kalooki_turns=True)


def _owner(context: dict[str, Any]) -> int:
    return 1 if context.get("owner") == "other" else 0


def _opened(context: dict[str, Any]) -> bool:
    # contract: "laid_down"; kalooki/rummy40: "opened"; rummy500 has no precondition (D19).
    return bool(context.get("opened", context.get("laid_down")))


def _laid_off(case: Case, rules: Rules) -> tuple[Meld, CardsLaidOff] | None:
    """The table meld and the layoff event, or None where the layoff is refused."""
    context = case.get("context", {})
    try:
        meld = make_meld(_cards(case["meld"]), rules, _kind(case))
        cards = _cards(case["cards"])
    except (RuleViolation, CardError):
        return None
    at = End(case["at"]) if case.get("at") else None
    hand = [*cards, *_fillers([*cards, *meld.cards], 2)]
    state = _position(rules, hand, _opened(context), [(meld, _owner(context))])
    try:
        events = decide(state, LayOff(0, 0, cards, at), seed=_SEED)
    except RuleViolation:
        return None
    return meld, next(event for event in events if isinstance(event, CardsLaidOff))


def _layoff(case: Case, rules: Rules) -> dict[str, Any]:
    laid = _laid_off(case, rules)
    if laid is None:
        return {"valid": False}
    return {"valid": True, "result": [card.text for card in laid[1].result.cards]}


def _credited_layoff(case: Case, rules: Rules) -> dict[str, Any]:
    laid = _laid_off(case, rules)
    if laid is None:
        return {"valid": False}
    meld, event = laid
    credit = layoff_credit(meld, event.result, rules)  # rummy500 D12, D16
    return {"valid": True, "result": [card.text for card in event.result.cards], "credit": credit}


def _joker_swap(case: Case, rules: Rules) -> dict[str, Any]:
    context = case.get("context", {})
    try:
        meld = make_meld(_cards(case["meld"]), rules, _kind(case))
        cards = _cards(case["cards"])
    except (RuleViolation, CardError):
        return {"valid": False}
    use = _joker_use([*cards, *meld.cards])
    hand = [*cards, *use, *_fillers([*cards, *meld.cards, *use], 2)]
    state = _position(rules, hand, _opened(context), [(meld, _owner(context))])
    # Kalooki D10: a release carries the use of the freed joker; here a run the joker completes.
    then = LayMelds(0, ((*use, JOKER),), (MeldKind.RUN,)) if rules.freed_joker_must_be_used else None
    try:
        events = decide(state, SwapJoker(0, 0, cards, then), seed=_SEED)
    except RuleViolation:
        return {"valid": False}
    swapped = next(event for event in events if isinstance(event, JokerSwapped))
    return {"valid": True, "freed": JOKER.text, "result": [card.text for card in swapped.result.cards]}


def _hand_penalty(case: Case, rules: Rules) -> dict[str, Any]:
    context = case.get("context", {})
    cards = _cards(case["cards"])
    return {"penalty": loser_penalty(cards, rules, bool(context.get("winner_kalooki")))}


def _round_penalty(case: Case, rules: Rules) -> dict[str, Any]:
    buys = int(case.get("context", {}).get("buys", 0))
    return {"penalty": round_penalty(hand_penalty(_cards(case["cards"]), rules), buys, rules)}  # contract D17


def _going_out(case: Case, rules: Rules, kalooki_bonus: bool = False) -> dict[str, Any]:
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
        events: list[Event] = decide(state, command, seed=_SEED)
    except RuleViolation:
        return {"valid": False}
    ended = next(event for event in events if isinstance(event, DealEnded))
    out: dict[str, Any] = {"valid": True}
    if kalooki_bonus:
        out["kalooki"] = ended.kalooki and any(isinstance(event, MeldsLaid) for event in events)
    return out


def _kalooki_going_out(case: Case, rules: Rules) -> dict[str, Any]:
    return _going_out(case, rules, kalooki_bonus=True)


def _prize_split(case: Case, rules: Rules) -> dict[str, Any]:
    penalties = {str(player): int(points) for player, points in case["penalties"].items()}
    return {"result": prize_split(int(case["pool"]), str(case["winner"]), penalties, rules)}


def _match_result(case: Case, _rules: Rules) -> dict[str, Any]:
    totals = {str(player): int(points) for player, points in case["penalties"].items()}
    return {"winners": sorted(match_winners(totals))}


def _contract(case: Case, rules: Rules) -> dict[str, Any]:
    """A laydown by seat 0 in round `round`, after the draw, through `game.decide` (§3.8, D7, D11)."""
    round_number = case["round"]
    try:
        groups = tuple(_cards(cards) for cards in case["melds"])
        given = case.get("hand")
        hand = (
            list(_cards(given))
            if given is not None
            else [*(card for cards in groups for card in cards), *_fillers([c for g in groups for c in g], 2)]
        )
    except CardError:
        return {"valid": False}
    if type(round_number) is not int or not 1 <= round_number <= ROUNDS:
        raise ValueError(f"round must be 1 to 8, got {round_number!r}")
    kinds = tuple(_kind(case, i) for i in range(len(groups)))
    state = _position(rules, hand, opened=False, deal=round_number)
    try:
        decide(state, LayMelds(0, groups, kinds), seed=_SEED)
    except RuleViolation:
        return {"valid": False}
    return {"valid": True}


_ROLE_SEAT: Final = {"other": 2, "forehand": 1, "discarder": 0}


def _buy(case: Case, rules: Rules) -> dict[str, Any]:
    """A buy request while seat 0's discard is on offer to forehand seat 1, granted as seat 1 draws."""
    context = case.get("context", {})
    round_number = case["round"]
    seat = _ROLE_SEAT[str(context.get("role", "other"))]
    before = int(context.get("buys_before", 0))
    if type(round_number) is not int or not 1 <= round_number <= ROUNDS or before < 0:
        raise ValueError("round must be 1 to 8 and buys_before not negative")
    discard = STANDARD_PACK[45]
    state = _position(rules, STANDARD_PACK[:13], True, deal=round_number, phase=Phase.DRAW)
    buys = tuple(before if i == seat else 0 for i in range(rules.players))
    offered = round_number < ROUNDS
    state = state._replace(
        turn=1,
        discard=(STANDARD_PACK[40], discard),
        variant_state=ContractState(buys, discard if offered else None, 0 if offered else None),
    )
    try:
        events = decide(state, BuyDiscard(seat), seed=_SEED)
    except RuleViolation:
        return {"valid": False}
    for event in events:
        state = evolve(state, event)
    granted = next(
        event for event in decide(state, DrawFromStock(1), seed=_SEED) if isinstance(event, BuyGranted)
    )
    return {
        "valid": True,
        "penalty": granted.penalty,
        "cards_received": len((granted.card, granted.stock_card)),
    }


def _buy_dispute(case: Case, _rules: Rules) -> dict[str, Any]:
    draws = {str(player): parse_card(card) for player, card in case["draws"].items()}
    return {"winner": dispute_winner(draws)}


def _table_rotation(case: Case, _rules: Rules) -> dict[str, Any]:
    tables = {str(table): [str(player) for player in players] for table, players in case["tables"].items()}
    closers = {
        str(table): None if player is None else str(player) for table, player in case["closers"].items()
    }
    scores = case.get("round_scores")
    dealers = case.get("dealer_seats")
    result = rotate_tables(
        tables,
        {table: closers.get(table) for table in tables},
        {str(player): int(points) for player, points in scores.items()} if scores else None,
        {str(table): int(seat) for table, seat in dealers.items()} if dealers else None,
    )
    return {"result": result}


def _pile_index(pile: Sequence[Card], card: Card) -> int:
    # With copies in the pile (option packs = 2), the topmost copy takes the fewest cards.
    return len(pile) - 1 - list(reversed(pile)).index(card)


def _discard_draw(case: Case, rules: Rules) -> dict[str, Any]:
    """A pick from the spread pile with its use, through `game.decide` (rummy500 §3.6, D7, D21)."""
    try:
        pile = _cards(case["pile"])
        selected = parse_card(case["select"])
        hand = _cards(case["hand"])
        use = case.get("use")
        table: list[tuple[Meld, int]] = []
        then: LayMelds | LayOff | None = None
        if use is not None and "meld" in use:
            then = LayMelds(0, (_cards(use["meld"]),), (_kind(case),))
        elif use is not None:
            table.append((make_meld(_cards(use["layoff"]["meld"]), rules), 1))
            then = LayOff(0, 0, _cards(use["layoff"]["cards"]))
    except (RuleViolation, CardError):
        return {"valid": False}
    if selected not in pile:
        return {"valid": False}
    state = _position(rules, hand, True, table, phase=Phase.DRAW, discard=pile)
    try:
        events = decide(state, PickFromPile(0, _pile_index(pile, selected), then), seed=_SEED)
    except RuleViolation:
        return {"valid": False}
    taken = [event.card.text for event in events if isinstance(event, CardDrawn)]
    return {"valid": True, "taken": taken[::-1]}


def _score(case: Case, rules: Rules) -> dict[str, Any]:
    """A rummy500 deal score: melded plus laid-off value minus hand value (§3.9, D12, D16)."""
    melded = sum(meld_value(make_meld(_cards(cards), rules), rules) for cards in case["melds"])
    for layoff in case.get("layoffs", []):
        meld = make_meld(_cards(layoff["meld"]), rules)
        at = End(layoff["at"]) if layoff.get("at") else None
        melded += layoff_credit(meld, lay_off(meld, _cards(layoff["cards"]), rules, at), rules)
    return {"score": melded - hand_penalty(_cards(case["hand"]), rules)}


def _game_end(case: Case, rules: Rules) -> dict[str, Any]:
    scores = {str(player): int(points) for player, points in case["scores"].items()}
    winner = game_winner(scores, rules.deals)  # D13: target_score, 500 by default
    return {"winner": winner, "settlement": None if winner is None else settlement(scores, winner)}


_KINDS: Final[dict[tuple[str, str], Callable[[Case, Rules], dict[str, Any]]]] = {
    **{(variant, "meld"): _meld for variant in ("kalooki", "rummy40", "rummy500")},
    ("contract", "meld"): _contract_meld,
    ("kalooki", "initial_meld"): _kalooki_initial_meld,
    ("rummy40", "initial_meld"): _initial_meld,
    **{(variant, "layoff"): _layoff for variant in ("kalooki", "rummy40", "contract")},
    ("rummy500", "layoff"): _credited_layoff,
    **{(variant, "joker_swap"): _joker_swap for variant in ("kalooki", "rummy40", "contract")},
    **{(variant, "hand_penalty"): _hand_penalty for variant in ("kalooki", "rummy40", "rummy500")},
    ("contract", "hand_penalty"): _round_penalty,
    ("contract", "contract"): _contract,
    ("contract", "buy"): _buy,
    ("contract", "buy_dispute"): _buy_dispute,
    ("contract", "table_rotation"): _table_rotation,
    ("rummy500", "discard_draw"): _discard_draw,
    ("rummy500", "score"): _score,
    ("rummy500", "game_end"): _game_end,
    ("kalooki", "going_out"): _kalooki_going_out,
    ("rummy40", "going_out"): _going_out,
    ("kalooki", "prize_split"): _prize_split,
    ("rummy40", "match_result"): _match_result,
}
