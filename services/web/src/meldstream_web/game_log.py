"""The table's "What happened" log, worded here for one stream's reader and sent with its updates (and
printed by `meldstream play` and `watch`, the same lines).

Each line comes from the engine's history (GetHistory, with only the cards this reader may see) worded
by `rummy_contracts.sentences`, the module the terminal and the replay use too: the page holds no
wording rule and no log of its own. A stream's first update is followed by the whole history so far
(a reload, a late spectator), each later one by the lines up to its seq. A stream resumed after
Last-Event-ID sends the whole history again: the page may have lost the lines of its last update
with the connection, and shows each seq's line once.
"""

from __future__ import annotations

from typing import Any

from rummy.game.v1 import game_service_pb2 as gs
from rummy_client import GameClient, RpcFailure
from rummy_contracts.catalogue import Words
from rummy_contracts.sentences import Narrator


class GameLog:
    """The lines of one game for one reader (`seat`, or None for a spectator), in `say`'s language."""

    def __init__(self, client: GameClient, game_id: str, seat: int | None, say: Words) -> None:
        self._client, self._game_id, self._seat, self._say = client, game_id, seat, say
        self._narrator: Narrator | None = None
        self._read = 0  # the last seq read from the history
        self._pending: list[tuple[int, str]] = []

    async def upto(self, update: gs.GameUpdate) -> list[dict[str, Any]]:
        """The lines of the events up to `update.seq` not yet sent, as `{"seq", "text"}`."""
        if self._narrator is None:  # the names the table shows
            self._narrator = Narrator(
                self._seat, [seat.name or seat.player_id for seat in update.view.seats], self._say
            )
        if update.seq > self._read:
            try:
                history = await self._client.history(self._game_id, self._seat, after_seq=self._read)
            except RpcFailure:  # the lines wait for the next update; the table goes on without them
                return []
            if history.entries:
                self._read = history.entries[-1].event.seq
            self._pending += self._narrator.lines(history.entries)
        sent = [{"seq": seq, "text": text} for seq, text in self._pending if seq <= update.seq]
        self._pending = [(seq, text) for seq, text in self._pending if seq > update.seq]
        return sent
