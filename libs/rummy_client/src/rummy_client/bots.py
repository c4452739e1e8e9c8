"""Bots that play a seat through the SDK, exactly as a third-party client would.

A `BotPlayer` follows its seat's stream; on its turn it asks the engine for the legal actions, lets a
rules bot (`rummy_rules.bots`: random or greedy) choose one from what the seat can see, and submits
it with a fresh command id. It never sees another seat's cards: it only has its stream and answers.
"""

from __future__ import annotations

import hashlib
import random
import uuid
from dataclasses import dataclass, field

import grpc
from rummy.game.v1 import game_service_pb2 as gs
from rummy_rules.bots import BOTS, Bot, SeatView

from rummy_client import convert, wire
from rummy_client.client import GameClient, RpcFailure


@dataclass(slots=True)
class BotStats:
    """What a bot saw and had acknowledged, for the tests' leak and ordering checks."""

    messages: list[gs.GameUpdate] = field(default_factory=list)
    acknowledged: list[tuple[str, int, int]] = field(default_factory=list)  # command id, first, last seq
    answers: list[gs.SubmitActionResponse] = field(default_factory=list)  # kept with keep=True
    listings: list[gs.ListLegalActionsResponse] = field(default_factory=list)  # kept with keep=True


class BotPlayer:
    """Plays `seat` of `game_id` until the game ends; `keep` keeps every update (for leak scans)."""

    def __init__(
        self, client: GameClient, game_id: str, seat: int, bot: str | Bot = "greedy", keep: bool = False
    ) -> None:
        self._client = client
        self._game_id = game_id
        self._seat = seat
        self._bot: Bot = BOTS[bot] if isinstance(bot, str) else bot
        self._rng = random.Random(hashlib.sha256(f"{game_id}/{seat}".encode()).digest())
        self._keep = keep
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
            if view.phase == gs.PHASE_GAME_OVER:
                break
            if view.phase not in (gs.PHASE_DRAW, gs.PHASE_PLAY):
                continue
            if view.turn != self._seat and not view.HasField("offer"):
                continue  # out of turn only a contract buy (or pass) can be open to this seat
            if view.seq <= acted_at:
                continue
            await self._act(view)
            acted_at = view.seq
        assert self.final is not None
        return self.final

    async def _act(self, view: gs.PlayerView) -> None:
        listed = await self._client.legal_actions(self._game_id, self._seat)
        if self._keep:
            self.stats.listings.append(listed)
        if listed.seq != view.seq or not listed.actions:
            return  # the game moved on (e.g. the turn timer played); the stream will tell
        actions = list(listed.actions)
        options = [wire.command_from_pb(self._seat, action) for action in actions]
        chosen = self._bot(SeatView(convert.position(view), self._seat), options, self._rng)
        command_id = uuid.uuid4().hex
        try:
            answer = await self._client.submit(
                self._game_id, self._seat, actions[options.index(chosen)], command_id
            )
            self.stats.acknowledged.append((command_id, answer.first_seq, answer.last_seq))
            if self._keep:
                self.stats.answers.append(answer)
        except RpcFailure as failure:
            # Refused because the game moved on meanwhile (the turn timer played, another seat bought
            # the card on offer) is a lost race; refused on an unchanged game is a real error.
            if failure.status is not grpc.StatusCode.FAILED_PRECONDITION:
                raise
            if (await self._client.view(self._game_id, self._seat)).seq == listed.seq:
                raise
