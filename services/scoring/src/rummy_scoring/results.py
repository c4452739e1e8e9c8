"""Scoring one game from its events: a pure fold, so a replay of the same events gives the same results.

The player ids come from the engine's `TableSeated` event, which follows `GameStarted` in the same
command, and so does whether the game is rated: only a table matchmaking formed (`requested_by`
matchmaking, which the engine records only for matchmaking's own service tokens) that it marked rated (a
rated queue's or a tournament's). A table a player or an operator created never moves a rating, whatever
else it says. A game logged before accounts (its TableSeated names no seat: `player_names` empty) was
rated when matchmaking formed it, as then; and its players, known by the names they typed, may be given
the accounts they now have (`aliases`, SCORING_LEGACY_IDS: docs/operators/accounts.md). Penalties arrive
per deal in `DealEnded`; match winners and the Kalooki prize split are recomputed with the rules engine's own
functions (`match_winners`, `prize_split`), so scoring and the engine cannot disagree on a rule.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any, Final

from google.protobuf.message import DecodeError
from rummy.game.v1 import events_pb2 as ev
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy_contracts.event_format import OtherEventFormat, check_format
from rummy_contracts.wire import option_from_pb
from rummy_rules.scoring import match_winners, prize_split
from rummy_rules.variants import MatchMode, rules_for, variant_named
from rummy_store import EventRecord

FROM_MATCHMAKING: Final = "matchmaking"  # TableSeated.requested_by of the tables matchmaking formed
RELEVANT: Final = frozenset(
    {"game_started", "table_seated", "deal_started", "deal_ended", "seat_forfeited", "game_ended"}
)
EVENT_TYPES: Final = frozenset(f.name for f in ev.GameEvent.DESCRIPTOR.oneofs_by_name["event"].fields)


class ScoringError(ValueError):
    """A record scoring can never apply (unreadable, another format, out of the game's sequence)."""


def read(record: EventRecord) -> ev.GameEvent | None:
    """The envelope of a record scoring needs, None for one it does not; a record that is not what its
    headers say raises: protobuf parses many byte strings, so the payload must also match them."""
    if record.event_type not in RELEVANT:
        if record.event_type not in EVENT_TYPES:
            raise ScoringError(f"unknown event type {record.event_type!r}")
        return None
    try:
        check_format(record)
    except OtherEventFormat as exc:  # skipped, not refused: one stray record must not stop every game
        raise ScoringError(exc.reason) from None
    try:
        envelope = ev.GameEvent.FromString(record.payload)
    except DecodeError:
        raise ScoringError("the payload is not a GameEvent") from None
    case = envelope.WhichOneof("event")
    if (envelope.game_id, envelope.seq, case) != (record.game_id, record.seq, record.event_type):
        raise ScoringError(
            f"the payload is {case} seq {envelope.seq} of game {envelope.game_id!r}, not what its headers say"
        )
    return envelope


@dataclass(frozen=True, slots=True)
class GameScore:
    """What scoring keeps about one game between events (stored as JSON beside its tracking seq)."""

    variant: str
    players: tuple[str, ...]
    options: dict[str, int | bool | str]
    seq: int  # last game-event seq applied: the tracking record
    dealer: int = 0
    deals: int = 0
    totals: tuple[int, ...] = ()
    last_penalties: tuple[int, ...] = ()
    closer: int | None = None
    last_kalooki: bool = False
    published: int = 0  # events this game has on the scoring topic
    over: bool = False
    rated: bool = False  # counts for ratings (`seat`)
    names: tuple[str, ...] = ()  # the names shown for the players at seating
    forfeited: tuple[int, ...] = ()  # seats that forfeited (meldstream M3), in order: they rank last

    def dumps(self) -> str:
        return json.dumps(asdict(self))

    @staticmethod
    def loads(text: str | bytes) -> GameScore:
        data: dict[str, Any] = json.loads(text)
        for name in ("players", "totals", "last_penalties", "names", "forfeited"):
            data[name] = tuple(data.get(name, ()))
        return GameScore(**data)


def option_value(value: ev.OptionValue) -> int | bool | str:
    result = option_from_pb(value)
    if result is None:
        raise ScoringError("an option without a value")
    return result


def start(seq: int, message: ev.GameStarted) -> GameScore:
    """A game's score before its table is seated: players come with the TableSeated that follows."""
    options = {name: option_value(value) for name, value in message.options.items()}
    return GameScore(message.variant, (), options, seq, dealer=message.dealer, totals=(0,) * message.players)


def seat(
    state: GameScore, seq: int, envelope: ev.GameEvent, aliases: Mapping[str, str] | None = None
) -> GameScore:
    legacy = not envelope.table_seated.player_names  # logged before accounts
    players = tuple(envelope.table_seated.player_ids)
    if legacy and aliases:
        players = tuple(aliases.get(p, p) for p in players)
    if len(players) != len(state.totals):
        raise ScoringError(
            f"game {envelope.game_id}: {len(players)} player ids for {len(state.totals)} seats"
        )
    seated = envelope.table_seated
    rated = (seated.rated or legacy) and seated.requested_by == FROM_MATCHMAKING
    return replace(state, seq=seq, players=players, rated=rated, names=tuple(seated.player_names))


def ranks(variant: str, totals: tuple[int, ...], forfeited: tuple[int, ...] = ()) -> list[int]:
    """Finishing positions (1 = best, ties share) for the rating update. A seat that forfeited
    (meldstream M3) shares last place, below every seat that did not, whatever its total."""
    playing = [total for seat, total in enumerate(totals) if seat not in forfeited]
    better = sorted(set(playing), reverse=variant_named(variant).higher_is_better)
    last = len(better) + 1
    return [last if seat in forfeited else better.index(total) + 1 for seat, total in enumerate(totals)]


def step(
    state: GameScore | None, seq: int, envelope: ev.GameEvent, aliases: Mapping[str, str] | None = None
) -> tuple[GameScore, list[sc.ScoringEvent]]:
    """Apply one game event; returns the new state and the scoring events it causes (maybe none). An
    event out of the game's sequence (a second start or seating, anything after the end) raises."""
    case = envelope.WhichOneof("event")
    if state is None:
        if case != "game_started" or seq != 1:
            raise ScoringError(f"game {envelope.game_id}: {case} at seq {seq} before game_started")
        return start(seq, envelope.game_started), []
    if case == "game_started" or state.over:
        after = "game_ended" if state.over else "game_started"
        raise ScoringError(f"game {envelope.game_id}: {case} after {after}")
    if case == "table_seated":
        if state.players:
            raise ScoringError(f"game {envelope.game_id}: seated twice")
        return seat(state, seq, envelope, aliases), []
    if not state.players:
        raise ScoringError(f"game {envelope.game_id}: {case} before table_seated")
    if case == "deal_started":
        return replace(state, seq=seq, dealer=envelope.deal_started.dealer), []
    if case == "deal_ended":
        return _deal_ended(state, seq, envelope)
    if case == "seat_forfeited":  # meldstream M3: charged now, ranked last
        forfeit = envelope.seat_forfeited
        if forfeit.seat >= len(state.players) or forfeit.seat in state.forfeited:
            raise ScoringError(f"game {envelope.game_id}: seat {forfeit.seat} cannot forfeit")
        totals = list(state.totals)
        totals[forfeit.seat] += forfeit.points
        return replace(state, seq=seq, totals=tuple(totals), forfeited=(*state.forfeited, forfeit.seat)), []
    if case == "game_ended":
        return _game_ended(state, seq, envelope)
    return replace(state, seq=seq), []


def _deal_ended(
    state: GameScore, seq: int, envelope: ev.GameEvent
) -> tuple[GameScore, list[sc.ScoringEvent]]:
    ended = envelope.deal_ended
    penalties = tuple(ended.penalties)
    nobody_out = not ended.HasField("winner")
    if nobody_out and variant_named(state.variant).voids_unwon_deals and not any(penalties):
        # kalooki §3.11.3, rummy40 §3.10, M1: a void deal scores nothing and the same dealer deals again
        return replace(state, seq=seq), []
    if len(penalties) != len(state.players):
        raise ScoringError(f"game {envelope.game_id}: {len(penalties)} penalties for {len(state.players)}")
    totals = tuple(t + p for t, p in zip(state.totals, penalties, strict=True))
    deal = state.deals + 1
    hand = sc.HandScored(
        deal=deal,
        variant=state.variant,
        player_ids=state.players,
        winner=None if nobody_out else ended.winner,
        kalooki=ended.kalooki,
        penalties=penalties,
    )
    rules = rules_for(state.variant, len(state.players), **state.options)
    if rules.match_mode is MatchMode.CONTRACT_ROUNDS:  # contract M2: a game may start at round first_round
        hand.contract_round = rules.first_deal + state.deals
    new = replace(
        state,
        seq=seq,
        deals=deal,
        totals=totals,
        last_penalties=penalties,
        closer=None if nobody_out else ended.winner,
        last_kalooki=ended.kalooki,
    )
    return new, [sc.ScoringEvent(game_id=envelope.game_id, hand_scored=hand)]


def _game_ended(
    state: GameScore, seq: int, envelope: ev.GameEvent
) -> tuple[GameScore, list[sc.ScoringEvent]]:
    ended = envelope.game_ended
    rules = rules_for(state.variant, len(state.players), **state.options)
    totals = tuple(ended.totals) if variant_named(state.variant).higher_is_better else state.totals
    if rules.match_mode in (MatchMode.SINGLE_DEAL, MatchMode.ELIMINATION, MatchMode.TARGET_SCORE):
        winners = list(ended.winners)  # the deal's winner (kalooki D16) / last survivor / first to target
    else:
        playing = [seat for seat in range(len(totals)) if seat not in state.forfeited]  # M3
        winners = match_winners(dict(enumerate(totals)), playing)  # rummy40 §3.12 D14, contract §3.4
    payouts: list[int] = []
    if rules.prize_pool and rules.match_mode is MatchMode.SINGLE_DEAL and state.closer is not None:
        losers = {
            seat: p
            for seat, p in enumerate(state.last_penalties)
            if seat != state.closer and seat not in state.forfeited  # M3: no share
        }
        split = prize_split(rules.prize_pool, state.closer, losers, rules, state.last_kalooki)
        payouts = [split.get(seat, 0) for seat in range(len(state.players))]  # kalooki §3.13.2 D17
    elif rules.prize_pool and state.forfeited:  # M3: a game ended by forfeits, as the engine paid it
        payouts = list(ended.payouts)
    match = sc.MatchScored(
        variant=state.variant,
        player_ids=state.players,
        totals=totals,
        winners=[state.players[seat] for seat in winners],
        payouts=payouts,
        closer=state.players[state.closer] if state.closer is not None else "",
        last_deal_penalties=state.last_penalties,
        last_dealer=state.dealer,
        deals=state.deals,
        forfeited=[state.players[seat] for seat in state.forfeited],
    )
    new = replace(state, seq=seq, totals=totals, over=True)
    return new, [sc.ScoringEvent(game_id=envelope.game_id, match_scored=match)]
