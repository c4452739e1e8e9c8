"""Auditing what a client was shown: given a finished game's full history, list any hidden-card leak.

Used by the tests' leak scans and useful for disputes: every update a seat received must show exactly
that seat's hand (a spectator's none) and no seed before the end. A view has one private card list,
`hand`; the table, pile top and counts are public, so with `hand` right no other card can be in it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from google.protobuf.message import Message
from rummy.game.v1 import game_service_pb2 as gs
from rummy_contracts import event_format, wire
from rummy_contracts.facts import Fact
from rummy_rules.game import evolve
from rummy_rules.state import GameState, Phase
from rummy_rules.variant import variant_named


def states_by_seq(entries: Iterable[gs.HistoryEntry]) -> dict[int, GameState]:
    """The true state after every event of a game, from its full history."""
    states: dict[int, GameState] = {}
    state: GameState | None = None
    for entry in entries:
        event = event_format.event_from_pb(entry.event)
        if not isinstance(event, Fact):  # the engine's facts change no cards
            state = evolve(state, event)
        assert state is not None, "a history starts with GameStarted"
        states[entry.event.seq] = state
    return states


def leaks(updates: Iterable[gs.GameUpdate], seat: int | None, truth: dict[int, GameState]) -> list[str]:
    """Every way the updates shown to `seat` (None: a spectator) differ from what it may see."""
    problems = []
    for update in updates:
        state = truth[update.seq]
        view = update.view
        expected = state.hands[seat] if seat is not None else ()
        if Counter(wire.cards_from_pb(view.hand)) != Counter(expected):
            problems.append(f"seq {update.seq}: the hand shown is not seat {seat}'s")
        if list(view.hand_sizes) != [len(hand) for hand in state.hands]:
            problems.append(f"seq {update.seq}: wrong hand sizes")
        spread = variant_named(state.rules.variant).spread_pile
        if list(wire.cards_from_pb(view.discard_pile)) != (list(state.discard) if spread else []):
            problems.append(f"seq {update.seq}: the discard pile shown is not the public one")
        if view.seed and state.phase is not Phase.GAME_OVER:
            problems.append(f"seq {update.seq}: the seed was shown before the end")
    return problems


def action_leaks(
    updates: Iterable[gs.GameUpdate], seat: int | None, truth: dict[int, GameState]
) -> list[str]:
    """Legal actions in a seat's updates may only name cards of its own hand or of the table (a freed
    joker; rummy500's spread pile); a spectator's updates list none."""
    problems = []
    for update in updates:
        if not update.legal_actions:
            continue
        if seat is None:
            problems.append(f"seq {update.seq}: a spectator was sent legal actions")
            continue
        state = truth[update.seq]
        allowed = Counter(state.hands[seat]) + Counter(card for meld in state.melds for card in meld.cards)
        if variant_named(state.rules.variant).spread_pile:  # a pile pick names cards of the public pile
            allowed += Counter(state.discard)
        for action in update.legal_actions:
            named = Counter(wire.cards_from_pb(_cards_in(action)))
            if named - allowed:
                problems.append(f"seq {update.seq}: an action names cards outside seat {seat}'s hand")
    return problems


def _cards_in(action: gs.Action) -> list[Any]:
    found: list[Any] = []

    def walk(message: Message) -> None:
        for descriptor, value in message.ListFields():
            if (
                descriptor.message_type is not None
                and descriptor.message_type.full_name == "rummy.game.v1.Card"
            ):
                found.extend(value if descriptor.is_repeated else [value])
            elif descriptor.message_type is not None:
                for item in value if descriptor.is_repeated else [value]:
                    walk(item)

    walk(action)
    return found
