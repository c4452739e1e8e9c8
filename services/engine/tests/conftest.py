"""Helpers for engine tests: an in-process engine on the embedded store, tokens, and the leak check."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rummy.game.v1 import events_pb2
from rummy.game.v1 import game_service_pb2 as gs
from rummy_client import convert
from rummy_rules.events import Event
from rummy_rules.game import evolve
from rummy_rules.state import GameState, Phase
from rummy_service.auth import DEV_SECRET, OPERATOR, TokenIssuer

TOKENS = TokenIssuer(DEV_SECRET)


def token(player: str, role: str = "player") -> str:
    return TOKENS.issue(player, role)


def operator_token() -> str:
    return TOKENS.issue("ops", OPERATOR)


def states_by_seq(history: gs.GetHistoryResponse) -> dict[int, GameState]:
    """The true state after every event of a finished game, from its full history."""
    from rummy_engine import codec  # the engine's own decoder: tests may use it

    states: dict[int, GameState] = {}
    state: GameState | None = None
    for entry in history.entries:
        event: Event = codec.event_from_pb(events_pb2.GameEvent.FromString(entry.event.SerializeToString()))
        state = evolve(state, event)
        states[entry.event.seq] = state
    return states


def assert_no_leak(updates: Sequence[gs.GameUpdate], seat: int | None, truth: dict[int, GameState]) -> int:
    """Every update shows exactly the seat's own hand (none to spectators) and no seed before the end.

    The view has one private card list, `hand`; with it equal to the seat's true hand, and the table,
    pile top and counts public, no other card of any hand can be in the message. Returns messages checked.
    """
    for update in updates:
        state = truth[update.seq]
        view = update.view
        expected = state.hands[seat] if seat is not None else ()
        assert Counter(convert.cards(view.hand)) == Counter(expected), f"seq {update.seq}: wrong hand"
        assert list(view.hand_sizes) == [len(h) for h in state.hands]
        if state.phase is not Phase.GAME_OVER:
            assert view.seed == b"", f"seq {update.seq}: seed before the end"
    return len(updates)
