"""The shape of a command handler, and the entries of the tables that map commands to handlers.

`turn` holds the shared commands' handlers, a variant adds its own (`Variant.handlers`); both build
their tables with `handles`. Kept below both, so the variant protocol can name an entry's type.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from rummy_rules.commands import Command
from rummy_rules.events import Event
from rummy_rules.secret import Seed
from rummy_rules.state import GameState, Phase

# A handler takes its own command type; the table is keyed by that type, so a handler is looked up
# for exactly the commands it takes. `handles` pairs them so mypy checks each pair.
Handler = Callable[[GameState, Any, Seed], list[Event]]
# The phase a command needs (None: any, as for the out-of-turn buying commands) and its handler.
Entry = tuple[Phase | None, Handler]
C = TypeVar("C", bound=Command)


def handles(
    command: type[C], handler: Callable[[GameState, C, Seed], list[Event]], phase: Phase | None
) -> tuple[type[C], Entry]:
    """An entry of a handler table: `decide_command` checks the phase, then calls the handler,
    which mypy checks against the command type."""
    return command, (phase, handler)
