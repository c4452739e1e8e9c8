"""Bots that play a seat through the SDK, exactly as a third-party client would.

A `BotPlayer` follows its seat's stream; an update that lists legal actions (the engine lists them
whenever the seat may act) is its turn: a rules bot (`rummy_rules.bots`: random or greedy) chooses one
from what the seat can see, and it submits it with a fresh command id. One stream message and one
call per move. It never sees another seat's cards: it only has its stream and answers. Before the
first deal it sends a random seed of its own (`GameClient.offer_seed`), as every meldstream client does.
"""

from __future__ import annotations

import hashlib
import random
import uuid
from dataclasses import dataclass, field

import grpc
from rummy.game.v1 import game_service_pb2 as gs
from rummy_contracts import wire
from rummy_rules.bots import BOTS
from rummy_rules.seat_view import Bot, SeatView

from rummy_client import convert
from rummy_client.client import GameClient, RpcFailure


@dataclass(slots=True)
class BotStats:
    """What a bot saw and had acknowledged, for the tests' leak and ordering checks."""

    messages: list[gs.GameUpdate] = field(default_factory=list)
    acknowledged: list[tuple[str, int, int]] = field(default_factory=list)  # command id, first, last seq


class BotPlayer:
    """Plays `seat` of `game_id` until the game ends; `keep` keeps every update (for leak scans);
    `seed`: send a random seed of the seat's own before the first deal."""

    def __init__(
        self,
        client: GameClient,
        game_id: str,
        seat: int,
        bot: str | Bot = "greedy",
        keep: bool = False,
        *,
        seed: bool = True,
    ) -> None:
        self._client = client
        self._game_id = game_id
        self._seat = seat
        self._bot: Bot = BOTS[bot] if isinstance(bot, str) else bot
        self._rng = random.Random(hashlib.sha256(f"{game_id}/{seat}".encode()).digest())
        self._keep = keep
        self._seed = seed
        self.stats = BotStats()
        self.final: gs.PlayerView | None = None

    async def play(self) -> gs.PlayerView:
        """Play to the end; returns the seat's final view."""
        acted_at = -1
        async for update in self._client.updates(self._game_id, self._seat):
            if self._keep:
                self.stats.messages.append(update)
            view = update.view
            self.final = view
            if self._seed:
                self._seed = False
                await self._client.offer_seed(self._game_id, self._seat, view)
            if view.phase == gs.PHASE_GAME_OVER:
                break
            if not update.legal_actions or view.seq <= acted_at:
                continue  # not this seat's move (or already answered)
            await self._act(view, list(update.legal_actions))
            acted_at = view.seq
        assert self.final is not None
        return self.final

    async def _act(self, view: gs.PlayerView, actions: list[gs.Action]) -> None:
        options = [wire.command_from_pb(self._seat, action) for action in actions]
        chosen = self._bot(SeatView(convert.position(view), self._seat), options, self._rng)
        command_id = uuid.uuid4().hex
        try:
            answer = await self._client.submit(
                self._game_id, self._seat, actions[options.index(chosen)], command_id
            )
            self.stats.acknowledged.append((command_id, answer.first_seq, answer.last_seq))
        except RpcFailure as failure:
            # Refused because the game moved on meanwhile (the turn timer played, another seat bought
            # the card on offer) is a lost race; refused on an unchanged game is a real error.
            if failure.status is not grpc.StatusCode.FAILED_PRECONDITION:
                raise
            if (await self._client.view(self._game_id, self._seat)).seq == view.seq:
                raise
