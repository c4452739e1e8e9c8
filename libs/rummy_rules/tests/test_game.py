"""Scripted scenarios for the game state machine, one per rule or decision (cited in each test)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

import pytest
from rummy_rules import table_index
from rummy_rules.bots import random_legal
from rummy_rules.cards import JOKER, STANDARD_PACK, parse_card, parse_cards
from rummy_rules.commands import Discard, DrawFromStock, GoOut, LayMelds, LayOff, SwapJoker, TakeDiscard
from rummy_rules.errors import RuleViolation
from rummy_rules.events import (
    CardDiscarded,
    DealEnded,
    DealStarted,
    GameEnded,
    JokerSwapped,
    StockReshuffled,
)
from rummy_rules.game import apply, decide, evolve, legal_actions, replay, start
from rummy_rules.melds import End, Meld, MeldKind, make_meld
from rummy_rules.serialize import to_dict
from rummy_rules.simulate import simulate
from rummy_rules.state import GameState, Phase
from rummy_rules.variants import Rules, rules_for
from rummy_rules.views import observe

SEED = bytes(range(16))


def position(
    rules: Rules,
    hand: str,
    *,
    opened: bool = False,
    table: Sequence[tuple[str, int]] = (),
    phase: Phase = Phase.PLAY,
    stock: str = "2C 3C 4C 5C 6C",
    discard: str = "9D",
    taken: str | None = None,
    others: str = "KS QS JS",
) -> GameState:
    """Seat 0 to move with `hand`; other seats hold `others`; `table` melds with their owners."""
    players = rules.players
    melds = tuple(make_meld(parse_cards(cards), rules) for cards, _ in table)
    return GameState(
        rules=rules,
        seed_commitment=hashlib.sha256(SEED).hexdigest(),
        deal=1,
        dealer=players - 1,
        hands=(parse_cards(hand), *(parse_cards(others) for _ in range(players - 1))),
        stock=tuple(reversed(parse_cards(stock))),
        discard=parse_cards(discard),
        melds=melds,
        owners=tuple(owner for _, owner in table),
        opened=(opened, *(True for _ in range(players - 1))),
        turn=0,
        phase=phase,
        taken=parse_card(taken) if taken else None,
        turn_start_opened=opened,
        extended=False,
        took_unopened=False,
        credits=tuple((owner,) * len(meld.cards) for meld, (_, owner) in zip(melds, table, strict=True)),
        active=(True,) * players,
        totals=(0,) * players,
        penalties=(0,) * players,
        deals_done=0,
        reshuffles=0,
        winners=(),
        payouts=(),
    )


def refused(state: GameState, command: object) -> str:
    before = state
    with pytest.raises(RuleViolation) as caught:
        decide(state, command, seed=SEED)  # type: ignore[arg-type]
    assert state == before
    assert caught.value.rule and caught.value.message
    return caught.value.code


KALOOKI = rules_for("kalooki", 2)
RUMMY40 = rules_for("rummy40", 2)


@pytest.mark.parametrize(
    ("variant", "players", "deck", "upcard"), [("kalooki", 4, 106, 1), ("rummy40", 3, 54, 0)]
)
def test_start_deals_thirteen_each_from_a_committed_seed(
    variant: str, players: int, deck: int, upcard: int
) -> None:
    started = start(variant, players, SEED)
    assert started.seed_commitment == hashlib.sha256(SEED).hexdigest()
    assert len(started.deck) == deck  # kalooki src ¶2, rummy40 D1
    state = replay([started])
    assert [len(hand) for hand in state.hands] == [13] * players  # kalooki src ¶1, rummy40 src S2
    assert len(state.discard) == upcard  # kalooki src ¶5, rummy40 §3.3.3
    assert state.turn == (started.dealer + 1) % players  # D2: dealer's left plays first
    assert replay([start(variant, players, SEED)]) == state  # deterministic from the seed


def test_start_rejected_when_variant_or_table_size_unknown() -> None:
    for args in (("poker", 4), ("kalooki", 6), ("rummy40", 1)):
        with pytest.raises(RuleViolation):
            start(args[0], args[1], SEED)
    with pytest.raises(RuleViolation):
        start("rummy500", 7, SEED)  # rummy500 D1: 2-6 with one pack


def test_turn_order_and_phase_are_enforced() -> None:
    state = position(KALOOKI, "5H 6H 7H 9C", phase=Phase.DRAW)
    assert refused(state, DrawFromStock(1)) == "not_your_turn"  # kalooki §3.14
    assert refused(state, Discard(0, parse_card("9C"))) == "must_draw_first"
    state, _ = apply(state, DrawFromStock(0), seed=SEED)
    assert refused(state, DrawFromStock(0)) == "already_drawn"
    assert refused(state, TakeDiscard(0)) == "already_drawn"
    assert refused(state, Discard(0, parse_card("AS"))) == "card_not_in_hand"
    assert refused(state, "draw please") == "unknown_command"
    assert refused(state, DrawFromStock(7)) == "bad_seat"


def test_discard_rejected_when_card_was_just_taken_from_the_pile() -> None:
    state = position(KALOOKI, "5H 6H 7H 9C", phase=Phase.DRAW, discard="KD")
    state, _ = apply(state, TakeDiscard(0), seed=SEED)
    assert refused(state, Discard(0, parse_card("KD"))) == "cannot_discard_taken"  # D8
    assert Discard(0, parse_card("KD")) not in legal_actions(state, 0)
    apply(state, Discard(0, parse_card("9C")), seed=SEED)


def test_opening_rejected_when_new_melds_total_below_forty() -> None:
    state = position(KALOOKI, "9H 9S 9D 2C 3C 4C KS QS")
    code = refused(state, LayMelds(0, (parse_cards("9H 9S 9D"), parse_cards("2C 3C 4C"))))
    assert code == "opening_below_minimum"  # kalooki §3.6 D7: 27 + 9 = 36
    state = position(RUMMY40, "KC KD KH AS 2S 3S 9D 8D")
    assert refused(state, LayMelds(0, (parse_cards("KC KD KH"), parse_cards("AS 2S 3S")))) == (
        "opening_below_minimum"  # rummy40 src S9 S12: 30 + 6
    )


def test_opening_accepted_when_melds_reach_forty_together() -> None:
    state = position(RUMMY40, "JK KD KH 4C 5C 6C 9D 8D")
    after, _ = apply(state, LayMelds(0, (parse_cards("JK KD KH"), parse_cards("4C 5C 6C"))), seed=SEED)  # D7
    assert after.opened[0] and len(after.melds) == 2 and after.hands[0] == parse_cards("9D 8D")


def test_lay_off_and_swap_rejected_before_opening() -> None:
    state = position(KALOOKI, "8C 6H 2D 3D", table=[("5C 6C 7C", 1), ("5H JK 7H", 1)])
    assert refused(state, LayOff(0, 0, parse_cards("8C"))) == "not_opened"  # kalooki D9
    then = LayMelds(0, (parse_cards("2D 3D JK"),))
    assert refused(state, SwapJoker(0, 1, parse_cards("6H"), then)) == "not_opened"


def test_rummy40_lay_off_rejected_on_another_players_meld() -> None:
    state = position(RUMMY40, "8H 9D 9S", opened=True, table=[("5H 6H 7H", 1)])
    assert refused(state, LayOff(0, 0, parse_cards("8H"))) == "layoff_on_others_meld"  # D9
    rules = rules_for("rummy40", 2, layoff_on_others=True)
    apply(
        position(rules, "8H 9D 9S", opened=True, table=[("5H 6H 7H", 1)]),
        LayOff(0, 0, parse_cards("8H")),
        seed=SEED,
    )


def test_rummy40_joker_exchange_on_other_players_meld_keeps_joker_in_hand() -> None:
    state = position(RUMMY40, "6H 9D 9S", opened=True, table=[("5H JK 7H", 1)])
    after, events = apply(state, SwapJoker(0, 0, parse_cards("6H")), seed=SEED)  # src S15, D10
    assert isinstance(events[0], JokerSwapped)
    assert JOKER in after.hands[0] and after.melds[0].cards == parse_cards("5H 6H 7H")


def test_kalooki_release_rejected_when_freed_joker_is_not_used() -> None:
    state = position(KALOOKI, "6H 2D 3D 9S", opened=True, table=[("5H JK 7H", 1)])
    assert refused(state, SwapJoker(0, 0, parse_cards("6H"))) == "freed_joker_unused"  # D10
    then = LayMelds(0, (parse_cards("2D 3D JK"),))
    after, _ = apply(state, SwapJoker(0, 0, parse_cards("6H"), then), seed=SEED)
    assert after.hands[0] == parse_cards("9S") and len(after.melds) == 2
    bad = LayMelds(0, (parse_cards("2D 3D 4D"),))
    assert refused(state, SwapJoker(0, 0, parse_cards("6H"), bad)) == "freed_joker_unused"


def test_kalooki_meld_rejected_when_it_would_leave_nothing_to_discard() -> None:
    state = position(KALOOKI, "5H 6H 7H 8C", opened=True, table=[("9C 10C JC", 1)])
    after, _ = apply(state, LayMelds(0, (parse_cards("5H 6H 7H"),)), seed=SEED)
    assert refused(after, LayOff(0, 0, parse_cards("8C"))) == "must_keep_card_to_discard"  # src ¶18
    _, events = apply(after, Discard(0, parse_card("8C")), seed=SEED)
    assert isinstance(events[1], DealEnded) and events[1].winner == 0 and not events[1].kalooki


def test_kalooki_made_when_all_thirteen_laid_at_once_and_exempt_from_forty() -> None:
    hand = "AH 2H 3H AD 2D 3D AC 2C 3C AS 2S 3S 4S 9D"
    state = position(KALOOKI, hand, others="KD KH")
    melds = tuple(parse_cards(m) for m in ("AH 2H 3H", "AD 2D 3D", "AC 2C 3C", "AS 2S 3S 4S"))
    after, _ = apply(state, LayMelds(0, melds), seed=SEED)  # worth 28 < 40: D14 exemption
    _, events = apply(after, Discard(0, parse_card("9D")), seed=SEED)
    ended = next(e for e in events if isinstance(e, DealEnded))
    assert ended.kalooki and ended.penalties == (0, 20 + 25)  # §3.10, §3.12.3
    assert isinstance(events[-1], GameEnded) and events[-1].seed == SEED  # seed revealed
    no_exemption = rules_for("kalooki", 2, kalooki_exempt_from_opening=False)
    assert refused(position(no_exemption, hand), LayMelds(0, melds)) == "opening_below_minimum"


def test_seed_stays_out_of_the_log_and_state_until_the_end_and_must_match_its_commitment() -> None:
    started = start("rummy40", 2, SEED)
    secret = SEED.hex()
    assert secret not in json.dumps(to_dict(started))
    assert secret not in json.dumps(to_dict(replay([started])))
    state = position(KALOOKI, "5H 6H 7H 8C", opened=True, others="KD KH")
    after, _ = apply(state, LayMelds(0, (parse_cards("5H 6H 7H"),)), seed=SEED)
    assert secret not in json.dumps(to_dict(after)) and observe(after, None).seed is None
    wrong = bytes(16)
    # The seed is checked where it is used: here to reveal it as kalooki's single deal ends.
    assert decide(state, LayMelds(0, (parse_cards("5H 6H 7H"),)), seed=wrong)
    with pytest.raises(ValueError, match="commitment"):
        decide(after, Discard(0, parse_card("8C")), seed=wrong)
    ended, events = apply(after, Discard(0, parse_card("8C")), seed=SEED)
    assert isinstance(events[-1], GameEnded) and events[-1].seed == SEED
    assert ended.revealed_seed == SEED and observe(ended, 1).seed == SEED
    assert replay([started]).revealed_seed is None


def test_wrong_seed_refused_at_a_reshuffle_and_a_new_deal() -> None:
    state = position(KALOOKI, "5H 6H 7H 8C", opened=True, stock="", discard="2D 9D")
    with pytest.raises(ValueError):
        decide(state, Discard(0, parse_card("8C")), seed=bytes(16))  # kalooki D18: the stock is rebuilt
    _, events = apply(state, Discard(0, parse_card("8C")), seed=SEED)
    assert isinstance(events[-1], StockReshuffled)
    # rummy40 with two deals: going out (melding every card, D11) deals the second from the seed.
    rules = rules_for("rummy40", 2, deals_per_match=2)
    state = position(rules, "5H 6H 7H 8H", opened=True, others="KD KH")
    out = LayMelds(0, (parse_cards("5H 6H 7H 8H"),))
    with pytest.raises(ValueError):
        decide(state, out, seed=bytes(16))
    assert isinstance(decide(state, out, seed=SEED)[-1], DealStarted)


def test_kalooki_going_out_with_layoffs_is_not_a_kalooki() -> None:
    state = position(KALOOKI, "KH KS KD 5C 6C 7C 8C 9D", table=[("9C 10C JC", 1)])
    command = GoOut(
        0,
        (parse_cards("KH KS KD"), parse_cards("5C 6C 7C")),
        layoffs=(LayOff(0, 0, parse_cards("8C")),),
        discard=parse_card("9D"),
    )
    events = decide(state, command, seed=SEED)
    assert not next(e for e in events if isinstance(e, DealEnded)).kalooki  # D14


def test_rummy40_goes_out_by_melding_every_card_and_never_by_discard() -> None:
    state = position(RUMMY40, "8H 9S 10S JS", opened=True, table=[("5H 6H 7H", 0)])
    after, _ = apply(state, LayMelds(0, (parse_cards("9S 10S JS"),)), seed=SEED)
    assert refused(after, Discard(0, parse_card("8H"))) == "cannot_go_out_by_discard"  # D11
    _, events = apply(after, LayOff(0, 0, parse_cards("8H")), seed=SEED)
    ended = next(e for e in events if isinstance(e, DealEnded))
    assert ended.winner == 0 and ended.penalties == (0, 30)


def test_rummy40_meld_rejected_when_last_card_could_never_be_played() -> None:
    state = position(RUMMY40, "9S 10S JS 2D", opened=True)
    assert refused(state, LayMelds(0, (parse_cards("9S 10S JS"),))) == "last_card_unplayable"  # D11


def test_kalooki_reshuffle_keeps_the_last_discard_out_of_the_new_stock() -> None:
    state = position(KALOOKI, "5H 6H 9C", phase=Phase.DRAW, stock="2C", discard="3S 4S 5S")
    state, _ = apply(state, DrawFromStock(0), seed=SEED)
    state, events = apply(state, Discard(0, parse_card("9C")), seed=SEED)
    reshuffled = events[1]
    assert isinstance(events[0], CardDiscarded) and isinstance(reshuffled, StockReshuffled)  # D18
    assert sorted(reshuffled.cards) == sorted(parse_cards("3S 4S 5S"))
    assert state.discard == parse_cards("9C") and len(state.stock) == 3


def test_kalooki_deal_void_when_reshuffle_would_leave_no_stock() -> None:
    state = position(KALOOKI, "5H 6H 9C", phase=Phase.DRAW, stock="2C", discard="")
    state, _ = apply(state, DrawFromStock(0), seed=SEED)
    state, events = apply(state, Discard(0, parse_card("9C")), seed=SEED)
    assert isinstance(events[1], DealEnded) and events[1].winner is None  # §3.11.3
    assert isinstance(events[2], DealStarted) and events[2].dealer == 1  # same dealer again
    assert state.totals == (0, 0) and state.phase is Phase.DRAW


def test_rummy40_reshuffles_every_face_up_card_when_last_stock_card_is_drawn() -> None:
    state = position(RUMMY40, "5H 6H 9C", phase=Phase.DRAW, stock="2C", discard="3S 4S 5S")
    state, events = apply(state, DrawFromStock(0), seed=SEED)
    assert isinstance(events[1], StockReshuffled)  # D12
    assert state.discard == () and sorted(state.stock) == sorted(parse_cards("3S 4S 5S"))


def test_rummy40_match_rotates_dealer_and_ends_after_default_deals() -> None:
    assert rules_for("rummy40", 2).deals == 6 and rules_for("rummy40", 4).deals == 8  # §3.12
    assert rules_for("rummy40", 5).deals == 5
    rules = rules_for("rummy40", 2, deals_per_match=2)
    state = position(rules, "9S 10S JS", opened=True, others="KS QS")
    state, events = apply(state, LayMelds(0, (parse_cards("9S 10S JS"),)), seed=SEED)
    started = events[-1]
    assert isinstance(started, DealStarted) and started.dealer == 0  # src S1: next dealer
    assert state.totals == (0, 20) and state.deal == 2
    state = state._replace(
        hands=(parse_cards("9S 10S JS"), parse_cards("KD")), turn=0, phase=Phase.PLAY, opened=(True, True)
    )
    state, events = apply(state, LayMelds(0, (parse_cards("9S 10S JS"),)), seed=SEED)
    assert isinstance(events[-1], GameEnded) and events[-1].winners == (0,) and state.totals == (0, 30)


def test_kalooki_prize_pool_paid_at_game_end() -> None:
    rules = rules_for("kalooki", 3, prize_pool=1000)
    state = position(rules, "5H 6H 7H 8C", opened=True, others="KS QS")
    state = state._replace(
        hands=(state.hands[0], parse_cards("KS QS"), parse_cards("KS QS 10D 10H 10C JD QD"))
    )
    state, _ = apply(state, LayMelds(0, (parse_cards("5H 6H 7H"),)), seed=SEED)
    state, events = apply(state, Discard(0, parse_card("8C")), seed=SEED)
    assert state.totals == (0, 20, 70)
    assert events[-1] == GameEnded((0,), (0, 20, 70), (751, 181, 68), SEED)  # D17: L=250, weights 80, 30


def test_observe_shows_own_hand_and_only_counts_of_others() -> None:
    state = replay([start("kalooki", 3, SEED)])
    view = observe(state, 1)
    assert view.hand == state.hands[1] and view.hand_sizes == (13, 13, 13)
    assert view.seed is None and view.stock_size == len(state.stock)
    spectator = observe(state, None)
    assert spectator.hand is None and spectator.discard_top == state.discard[-1]


def test_illegal_input_changes_nothing() -> None:
    state = replay([start("rummy40", 2, SEED)])
    for command in (
        Discard(state.turn, STANDARD_PACK[0]),
        LayMelds(state.turn, (("AH", "2H", "3H"),)),  # type: ignore[arg-type]
        LayOff(state.turn, 3, (JOKER,), End.LOW),
        TakeDiscard(state.turn),  # no upcard in rummy40
    ):
        refused(state, command)
    assert evolve(state, CardDiscarded(state.turn, state.hands[state.turn][0])) != state


def test_card_type_checked_before_use() -> None:
    state = position(KALOOKI, "5H 6H 7H 9C", opened=True)
    assert refused(state, LayMelds(0, (("5H", "6H", "7H"),))) == "bad_card"  # type: ignore[arg-type]
    meld = Meld(MeldKind.RUN, parse_cards("5H 6H 7H"), 5, parse_card("5H").suit)
    assert make_meld(parse_cards("5H 6H 7H"), KALOOKI) == meld


def test_malformed_command_fields_are_refused() -> None:
    state = position(KALOOKI, "5H 6H 7H 8H 9C", opened=True, table=[("2C 3C 4C", 1)])
    assert refused(state, LayOff(0, 0, parse_cards("JK"), "low")) == "bad_end"  # type: ignore[arg-type]
    assert refused(state, LayOff(0, True, parse_cards("5C"))) == "no_such_meld"
    assert refused(state, LayMelds(0, (parse_cards("5H 6H 7H"),), ("run",))) == "bad_meld_kind"  # type: ignore[arg-type]
    assert refused(state, Discard(0, "9C")) == "bad_card"  # type: ignore[arg-type]


def test_kalooki_discard_draw_must_be_used_in_opening_with_option() -> None:
    rules = rules_for("kalooki", 2, discard_draw_before_opening="must_use_in_opening")  # D19 option
    state = position(rules, "KH KS 5C 6C 7C 2D 9S", phase=Phase.DRAW, discard="KD")
    assert TakeDiscard(0) in legal_actions(state, 0)
    state, _ = apply(state, TakeDiscard(0), seed=SEED)
    assert refused(state, Discard(0, parse_card("9S"))) == "discard_draw_not_used"
    code = refused(state, LayMelds(0, (parse_cards("5C 6C 7C"), parse_cards("KH KS JK"))))
    assert code == "card_not_in_hand"
    state, _ = apply(state, LayMelds(0, (parse_cards("KH KS KD"), parse_cards("5C 6C 7C"))), seed=SEED)
    apply(state, Discard(0, parse_card("9S")), seed=SEED)
    unusable = position(rules, "2H 5C 9S", phase=Phase.DRAW, discard="KD")
    assert refused(unusable, TakeDiscard(0)) == "discard_draw_not_usable"


def test_kalooki_discard_draw_that_could_only_open_by_discarding_its_copy_is_not_offered() -> None:
    """Found by a deep property run: the take was offered, then the turn had no legal move. Here
    only a Kalooki opens (51 needed), and its last card would be the other 2C: the taken card (D8)."""
    rules = rules_for(
        "kalooki",
        2,
        discard_draw_before_opening="must_use_in_opening",  # D19 option
        opening_min_points=51,
        kalooki_exempt_from_opening=True,
    )
    dead_end = position(rules, "2H 2D 2C", phase=Phase.DRAW, discard="2C")
    assert TakeDiscard(0) not in legal_actions(dead_end, 0)
    assert refused(dead_end, TakeDiscard(0)) == "discard_draw_not_usable"
    kalooki = position(rules, "2H 2D 9C", phase=Phase.DRAW, discard="2C")  # the last card is 9C
    assert TakeDiscard(0) in legal_actions(kalooki, 0)
    state, _ = apply(kalooki, TakeDiscard(0), seed=SEED)
    assert any(isinstance(action, LayMelds) for action in legal_actions(state, 0))


def test_kalooki_elimination_match_drops_players_at_the_limit() -> None:
    rules = rules_for("kalooki", 3, match_mode="elimination", elimination_limit=30)  # §5 match_mode
    state = position(rules, "5H 6H 7H 8C", opened=True)
    state = state._replace(hands=(state.hands[0], parse_cards("KS QS JS"), parse_cards("2S")))
    state, _ = apply(state, LayMelds(0, (parse_cards("5H 6H 7H"),)), seed=SEED)
    state, events = apply(state, Discard(0, parse_card("8C")), seed=SEED)
    assert state.active == (True, False, True) and isinstance(events[-1], DealStarted)
    assert state.dealer == 0 and len(state.hands[1]) == 0 and len(state.hands[2]) == 13
    state = state._replace(hands=(parse_cards("AS"), (), parse_cards("9H")), turn=2)
    state = state._replace(phase=Phase.PLAY, opened=(False, False, True), turn_start_opened=True)
    state, events = apply(state, Discard(2, parse_card("9H")), seed=SEED)
    assert isinstance(events[-1], DealStarted)  # seat 0 has 11 < 30: still two players
    state = state._replace(hands=(parse_cards("KS KD KH QC"), (), parse_cards("9D")), turn=2)
    state = state._replace(phase=Phase.PLAY, opened=(False, False, True), turn_start_opened=True)
    state, events = apply(state, Discard(2, parse_card("9D")), seed=SEED)
    assert events[-1] == GameEnded((2,), (51, 30, 2), (), SEED)


def test_table_index_kept_up_to_date_equals_one_built_afresh() -> None:
    """legal_actions reads layoffs off an index updated as melds are laid and extended (game.py)."""
    checked = 0
    for variant in ("kalooki", "rummy40", "rummy500", "contract"):
        result = simulate(variant, 3, hashlib.sha256(f"index/{variant}".encode()).digest(), random_legal)
        state = None
        for event in result.events:
            state = evolve(state, event)
            kept = table_index.table_index(state.melds, state.rules)
            assert kept == table_index.full_index(state.melds, state.rules)
            checked += bool(state.melds)
    assert checked > 500
