"""What a bot sees and what a bot is: one seat's view of a game, and the bot's signature.

Kept apart from the bots themselves (`bots`) so that the variant protocol, which names a variant's own
bot, needs nothing above the game state.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rummy_rules.cards import Card
from rummy_rules.commands import Command
from rummy_rules.contract_state import buying
from rummy_rules.melds import Meld
from rummy_rules.rules import Rules
from rummy_rules.state import GameState


@dataclass(slots=True)
class SeatView:
    """One seat's view of a game: its own hand, the table, the top discard and the rules; nothing hidden.

    Read-only by convention, not frozen: one is built per decision, and a frozen dataclass costs
    three times as much to build (its __init__ goes through object.__setattr__).
    """

    _state: GameState
    seat: int

    @property
    def rules(self) -> Rules:
        return self._state.rules

    @property
    def hand(self) -> tuple[Card, ...]:
        return self._state.hands[self.seat]

    @property
    def melds(self) -> tuple[Meld, ...]:
        return self._state.melds

    @property
    def owners(self) -> tuple[int, ...]:
        return self._state.owners

    @property
    def discard_top(self) -> Card | None:
        discard = self._state.discard
        return discard[-1] if discard else None

    @property
    def pile_size(self) -> int:
        return len(self._state.discard)

    @property
    def deal(self) -> int:
        """The deal number (the round, in contract rummy)."""
        return self._state.deal

    @property
    def opened(self) -> bool:
        """Whether this seat has opened (laid down, in contract rummy) this deal."""
        return self._state.opened[self.seat]

    @property
    def buys(self) -> int:
        """This seat's buys this round (contract rummy)."""
        return buying(self._state).buys[self.seat]


Bot = Callable[[SeatView, Sequence[Command], random.Random], Command]
