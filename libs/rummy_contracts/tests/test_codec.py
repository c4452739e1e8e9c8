"""The contracts' codecs: every GameEvent oneof case has an encoder and a decoder; events and actions
round-trip; a record or envelope of another event format is refused."""

from __future__ import annotations

import hashlib
import random
import typing

import pytest
from rummy.game.v1 import events_pb2
from rummy.game.v1 import game_service_pb2 as gs
from rummy_contracts import event_format, wire
from rummy_contracts.facts import (
    PlayerAway,
    PlayerReturned,
    SeatDisconnected,
    SeatReconnected,
    SeedContributed,
    TableSeated,
    TimeBankUsed,
    TurnTimedOut,
)
from rummy_rules import bots, commands
from rummy_rules.cards import Suit, parse_cards
from rummy_rules.events import DealEnded, Event, JokerSwapped, SeatForfeited
from rummy_rules.game import decide, evolve, legal_actions, start
from rummy_rules.melds import Meld, MeldKind
from rummy_rules.out_of_turn import OUT_OF_TURN
from rummy_rules.seat_view import SeatView
from rummy_rules.simulate import simulate
from rummy_rules.state import Phase
from rummy_rules.variants import PLAYABLE_VARIANTS
from rummy_store import EventRecord, LogPosition
from rummy_store.config_errors import ConfigError

CASES = [field.name for field in events_pb2.GameEvent.DESCRIPTOR.oneofs_by_name["event"].fields]


def _games() -> list[tuple[str, list[Event]]]:
    games = []
    for variant in PLAYABLE_VARIANTS:
        seed = hashlib.sha256(variant.encode()).digest()
        options = {"deals_per_match": 2} if variant == "rummy40" else {}
        result = simulate(variant, 3, seed, bots.greedy, options=options, max_decisions=3000)
        games.append((variant, list(result.events)))
    return games


GAMES = _games()
# Cases a short simulation may not reach, built by hand: a joker swap, a void deal (no winner), and
# the engine's facts (no simulation makes them).
EXTRA: list[event_format.Logged] = [
    JokerSwapped(1, 0, parse_cards("5H"), Meld(MeldKind.RUN, parse_cards("4H 5H 6H"), 4, Suit.HEARTS)),
    DealEnded(None, False, (0, 0, 0)),
    TableSeated(("ann", "bob"), 0, (), "ann"),
    TableSeated(("ann", "bob", "cy"), 5000, (("deals_per_match", 2), ("rotate", True)), "matchmaking"),
    TurnTimedOut(2, 3, False),
    TurnTimedOut(0, 4, True),
    PlayerAway(1),
    PlayerReturned(1),
    SeedContributed(0, bytes(range(32))),
    SeatForfeited(1, 87),
    SeatForfeited(0, -45),
    SeatDisconnected(2, 30_000, 1_765_000_000_000, 3),
    SeatReconnected(2),
    TimeBankUsed(1, 1_250),
    TableSeated(("ann", "bob"), 0, (), "ann", 30_000, time_bank_ms=60_000),
]


@pytest.mark.parametrize("case", CASES)
def test_every_oneof_case_has_an_encoder_and_a_decoder(case: str) -> None:
    cls = event_format.EVENT_CLASSES.get(case)
    if cls is None:
        pytest.skip(f"the rules engine has no {case} event yet (contract rummy, issue 4)")
    samples = [e for _, events in GAMES for e in [*events, *EXTRA] if type(e) is cls]
    assert samples, f"no {case} sample: add one to EXTRA"
    for event in samples:
        message = event_format.envelope("g", 1, "c", event, 0.0)
        assert message.WhichOneof("event") == case
        decoded = event_format.event_from_pb(events_pb2.GameEvent.FromString(message.SerializeToString()))
        assert decoded == event


def test_events_of_whole_games_round_trip_and_replay_to_the_same_state() -> None:
    seen = set()
    for _, events in GAMES:
        state = None
        decoded_state = None
        for seq, event in enumerate(events, start=1):
            raw = event_format.envelope("g", seq, f"c{seq}", event, 1.5).SerializeToString()
            back = event_format.event_from_pb(events_pb2.GameEvent.FromString(raw))
            seen.add(event_format.event_type(back))
            state = evolve(state, event)
            (rules_event,) = event_format.rules_events([back])
            decoded_state = evolve(decoded_state, rules_event)
        assert decoded_state == state
    # The simulations exercise the common events; a missing one here means the fixture games shrank.
    assert {"game_started", "card_drawn", "card_discarded", "melds_laid", "deal_ended", "game_ended"} <= seen


def test_legal_actions_round_trip_through_action_messages() -> None:
    rng = random.Random(5)
    for variant in PLAYABLE_VARIANTS:
        seed = hashlib.sha256(b"actions" + variant.encode()).digest()
        state = evolve(None, start(variant, 3, seed))
        for _ in range(300):
            if state.phase is not Phase.DRAW and state.phase is not Phase.PLAY:
                break
            actions = legal_actions(state, state.turn)
            for action in actions:
                raw = wire.command_to_pb(action).SerializeToString()
                assert wire.command_from_pb(state.turn, gs.Action.FromString(raw)) == action
            for event in decide(state, bots.greedy(SeatView(state, state.turn), actions, rng), seed=seed):
                state = evolve(state, event)


def test_every_rules_command_has_the_action_case_of_its_own_name() -> None:
    """The codec maps commands by name (one with only cards and numbers needs no code of its own):
    each command of the rules must have its case in `Action.kind`, and each case a command."""
    cases = {field.name for field in gs.Action.DESCRIPTOR.oneofs_by_name["kind"].fields}
    assert cases == {wire.case_name(cls.__name__) for cls in typing.get_args(commands.Command)}


def test_out_of_turn_kinds_name_the_rules_out_of_turn_commands_on_the_wire() -> None:
    kinds = {wire.command_to_pb(command(0)).WhichOneof("kind") for command in OUT_OF_TURN}
    assert wire.OUT_OF_TURN_KINDS == kinds == {"buy_discard", "pass_buy"}
    for kind in wire.OUT_OF_TURN_KINDS:  # each decodes to one of the rules' out-of-turn commands
        action = gs.Action()
        getattr(action, kind).SetInParent()
        assert isinstance(wire.command_from_pb(3, action), OUT_OF_TURN)


@pytest.mark.parametrize(
    "action",
    [
        gs.Action(),
        gs.Action(discard=gs.Discard()),
        gs.Action(pick_from_pile=gs.PickFromPile(index=2, lay_off=gs.LayOff(meld=0))),
        gs.Action(discard=gs.Discard(card=events_pb2.Card(rank=14, suit=events_pb2.SUIT_HEARTS))),
        gs.Action(discard=gs.Discard(card=events_pb2.Card(rank=5, suit=events_pb2.SUIT_UNSPECIFIED))),
        gs.Action(lay_melds=gs.LayMelds()),
        gs.Action(lay_off=gs.LayOff(meld=0)),
        gs.Action(swap_joker=gs.SwapJoker(meld=0)),
    ],
)
def test_malformed_actions_are_refused(action: gs.Action) -> None:
    with pytest.raises(wire.CodecError):
        wire.command_from_pb(0, action)


def _record(schema_version: int) -> EventRecord:
    """Seq 1 of game `g` as the engine logs it, under the `schema-version` header given."""
    event = TableSeated(("ann", "bob"), 0, (), "ann")
    payload = event_format.envelope("g", 1, "c", event, 0.0).SerializeToString()
    return EventRecord("g", 1, "c", "table_seated", schema_version, payload, LogPosition(0, 0))


def test_a_record_of_the_current_format_is_read() -> None:
    record = _record(event_format.SCHEMA_VERSION)
    event_format.check_format(record)
    assert event_format.event_of(record) == TableSeated(("ann", "bob"), 0, (), "ann")


@pytest.mark.parametrize("version", [1, event_format.SCHEMA_VERSION + 1])
def test_a_record_of_another_format_is_refused_with_one_error(version: int) -> None:
    """Every way to read a record checks its header; the error is a ConfigError, so a service or the CLI
    that meets it at start says so in one line, and `reason` is the short form a skipping reader logs."""
    record = _record(version)
    for read in (event_format.check_format, event_format.message_of, event_format.event_of):
        with pytest.raises(event_format.OtherEventFormat) as refused:
            read(record)
        assert isinstance(refused.value, ConfigError) and refused.value.version == version
        assert str(refused.value).startswith("game 'g' (seq 1) was written by a")
        assert f"(event format {version}; this one reads format {event_format.SCHEMA_VERSION})" in str(
            refused.value
        )
        assert refused.value.reason == (
            f"event format {version}; this meldstream reads format {event_format.SCHEMA_VERSION}"
        )
    with pytest.raises(event_format.OtherEventFormat, match=r"^the store X was written by an older"):
        event_format.check_format(_record(1), "the store X")


def test_an_envelope_of_another_format_is_refused() -> None:
    """An envelope read without its record (GetHistory, a file) carries its format: it is checked too."""
    message = event_format.envelope("g", 7, "c", PlayerAway(1), 0.0)
    assert event_format.event_from_pb(message) == PlayerAway(1)
    message.schema_version = 1
    with pytest.raises(event_format.OtherEventFormat, match=r"^game 'g' \(seq 7\) was written by an older"):
        event_format.event_from_pb(message)
