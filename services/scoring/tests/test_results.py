"""Scoring one game from its events: hands, match winners per variant, the Kalooki prize split (D17)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from rummy.game.v1 import events_pb2 as ev
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy_rules.scoring import prize_split
from rummy_rules.variants import rules_for
from rummy_scoring.results import GameScore, ScoringError, ranks, step

PLAYERS = ("ann", "bob", "cy")


def started(variant: str, **options: int) -> ev.GameEvent:
    message = ev.GameEvent(game_id="g", seq=1, game_started=ev.GameStarted(variant=variant, players=3))
    for name, value in options.items():
        message.game_started.options[name].int_value = value
    return message


def seated(seq: int, players: tuple[str, ...] = PLAYERS) -> ev.GameEvent:
    return ev.GameEvent(game_id="g", seq=seq, table_seated=ev.TableSeated(player_ids=players))


def deal_ended(seq: int, winner: int | None, penalties: list[int], kalooki: bool = False) -> ev.GameEvent:
    ended = ev.DealEnded(kalooki=kalooki, penalties=penalties)
    if winner is not None:
        ended.winner = winner
    return ev.GameEvent(game_id="g", seq=seq, deal_ended=ended)


def game_ended(seq: int, winners: list[int], totals: list[int]) -> ev.GameEvent:
    return ev.GameEvent(game_id="g", seq=seq, game_ended=ev.GameEnded(winners=winners, totals=totals))


def run(events: list[ev.GameEvent]) -> tuple[GameScore, list[sc.ScoringEvent]]:
    state: GameScore | None = None
    out = []
    for event in events:
        state, produced = step(state, event.seq, event)
        out.extend(produced)
        if event.HasField("game_started"):  # the engine seats the table in the same command
            state, _ = step(state, event.seq, seated(event.seq))
    assert state is not None
    return state, out


def test_kalooki_deal_and_prize_pool_split_by_d17() -> None:
    state, out = run(
        [
            started("kalooki", prize_pool=1000),
            deal_ended(9, 1, [60, 0, 130], True),
            game_ended(10, [1], [60, 0, 130]),
        ]
    )
    hand, match = out[0].hand_scored, out[1].match_scored
    assert (hand.deal, hand.winner, list(hand.penalties), hand.kalooki) == (1, 1, [60, 0, 130], True)
    rules = rules_for("kalooki", 3, prize_pool=1000)
    split = prize_split(1000, 1, {0: 60, 2: 130}, rules, True)
    assert list(match.payouts) == [split[0], split[1], split[2]] and sum(match.payouts) == 1000
    assert split[2] == 0 and split[0] > 0  # 130 is past the 100-point cut-off (kalooki §3.13.2)
    assert list(match.winners) == ["bob"] and match.closer == "bob" and state.over


def test_rummy40_match_winners_are_the_lowest_totals_and_void_deals_score_nothing() -> None:
    state, out = run(
        [
            started("rummy40", deals_per_match=2),
            deal_ended(5, 0, [0, 20, 35]),
            deal_ended(8, None, [0, 0, 0]),  # void: same dealer deals again
            deal_ended(12, 2, [15, 0, 0]),
            game_ended(13, [0, 2], [15, 20, 35]),
        ]
    )
    assert [e.WhichOneof("event") for e in out] == ["hand_scored", "hand_scored", "match_scored"]
    match = out[-1].match_scored
    assert list(match.totals) == [15, 20, 35] and list(match.winners) == ["ann"]
    assert state.deals == 2 and not match.payouts


def test_events_before_the_start_or_an_unreadable_table_are_refused() -> None:
    with pytest.raises(ScoringError, match="before game_started"):
        step(None, 3, deal_ended(3, 0, [0, 1, 2]))
    unseated, _ = step(None, 1, started("kalooki"))
    with pytest.raises(ScoringError, match="before table_seated"):
        step(unseated, 3, deal_ended(3, 0, [0, 1, 2]))
    with pytest.raises(ScoringError, match="2 player ids for 3 seats"):
        step(unseated, 2, seated(2, ("ann", "bob")))


def test_events_out_of_the_games_sequence_are_refused() -> None:
    with pytest.raises(ScoringError, match="game_started at seq 2 before game_started"):
        step(None, 2, started("kalooki"))
    state, _ = run([started("kalooki")])
    with pytest.raises(ScoringError, match="game_started after game_started"):
        step(state, 3, started("kalooki"))
    with pytest.raises(ScoringError, match="seated twice"):
        step(state, 3, seated(3))
    over, _ = run([started("kalooki"), deal_ended(4, 0, [0, 5, 7]), game_ended(5, [0], [0, 5, 7])])
    with pytest.raises(ScoringError, match="deal_ended after game_ended"):
        step(over, 6, deal_ended(6, 0, [0, 5, 7]))


def test_players_come_from_table_seated() -> None:
    state, _ = step(None, 1, started("kalooki"))
    state, _ = step(state, 2, seated(2, ("cy", "ann", "bob")))
    state, out = step(state, 9, deal_ended(9, 0, [0, 5, 7]))
    assert list(out[0].hand_scored.player_ids) == ["cy", "ann", "bob"] and state.totals == (0, 5, 7)


def test_ranks_share_ties_and_follow_the_variant_direction() -> None:
    assert ranks("kalooki", (10, 0, 10)) == [2, 1, 2]
    assert ranks("rummy500", (10, 0, 10)) == [1, 2, 1]


def test_state_round_trips_through_json() -> None:
    state, _ = run([started("kalooki"), deal_ended(4, 0, [0, 5, 7])])
    assert GameScore.loads(state.dumps()) == state


def test_a_deal_nobody_went_out_of_is_scored_unless_it_is_void() -> None:
    # contract D16 / rummy500 D10: no closer, everyone scores their hand
    _, out = run([started("contract"), deal_ended(7, None, [40, 15, 60])])
    assert not out[0].hand_scored.HasField("winner") and list(out[0].hand_scored.penalties) == [40, 15, 60]
    # kalooki M1 past its cap: a stalled deal with penalties counts; one without is void
    _, out = run([started("kalooki"), deal_ended(7, None, [0, 0, 0]), deal_ended(9, None, [12, 30, 8])])
    assert [list(e.hand_scored.penalties) for e in out] == [[12, 30, 8]]


def test_a_single_round_contract_game_names_its_round_and_its_closer() -> None:
    # contract M2 / D19: a tournament table of round 3 plays contract 3 alone and ends after it
    _, out = run(
        [
            started("contract", first_round=3, last_round=3),
            deal_ended(5, 1, [35, 0, 80]),
            game_ended(6, [1], [35, 0, 80]),
        ]
    )
    assert out[0].hand_scored.contract_round == 3 and out[0].hand_scored.deal == 1
    match = out[1].match_scored
    assert match.closer == "bob" and list(match.last_deal_penalties) == [35, 0, 80]
    assert list(match.totals) == [35, 0, 80] and list(match.winners) == ["bob"]
    _, whole = run([started("contract"), deal_ended(5, 0, [0, 10, 20]), deal_ended(9, 2, [5, 5, 0])])
    assert [e.hand_scored.contract_round for e in whole] == [1, 2]
    _, other = run([started("rummy40"), deal_ended(5, 0, [0, 10, 20])])
    assert other[0].hand_scored.contract_round == 0


def test_a_forfeited_seat_is_charged_ranks_last_and_never_wins() -> None:
    """meldstream M3: SeatForfeited adds its points to the seat's total; the match's winners and the
    rating's places leave it last, whatever its total (rummy40 D17)."""
    forfeit = ev.GameEvent(game_id="g", seq=5, seat_forfeited=ev.SeatForfeited(seat=0, points=7))
    state, out = run(
        [
            started("rummy40", deals_per_match=1),
            forfeit,
            deal_ended(9, 1, [0, 0, 30]),
            game_ended(10, [1], [7, 0, 30]),
        ]
    )
    match = out[-1].match_scored
    assert list(match.totals) == [7, 0, 30] and list(match.winners) == ["bob"]
    assert list(match.forfeited) == ["ann"] and state.forfeited == (0,)
    assert ranks("rummy40", state.totals, state.forfeited) == [3, 1, 2]
    assert ranks("rummy40", state.totals) == [2, 1, 3]  # without the forfeit ann would be second
    assert ranks("rummy500", (90, 500, 120), (0,)) == [3, 1, 2]
    with pytest.raises(ScoringError):  # a seat forfeits once
        step(replace(state, over=False), 11, forfeit)
