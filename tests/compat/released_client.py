"""A client of the released protos: it imports only code generated from them (the test puts that code
first on PYTHONPATH) and plays one game to its end on today's engine, as a client written against that
release would. Prints one line, `ended <game> actions=<n> updates=<n>`, or fails with the call refused.

Usage: released_client.py ADDRESS VARIANT PLAYERS [NAME=VALUE ...]  (token in MELDSTREAM_TOKEN)
"""

from __future__ import annotations

import os
import sys
import threading
import time
import uuid
from typing import Any

import grpc
from rummy.game.v1 import game_service_pb2 as pb
from rummy.game.v1 import game_service_pb2_grpc

# Prefer what ends a deal, as the Go client does; buys, passes and joker swaps are never chosen.
RANKS = ("go_out", "lay_melds", "lay_off", "draw_from_stock", "discard", "take_discard", "pick_from_pile")


def loneliness(card: Any, hand: list[Any]) -> int:
    """High for a card with no partner of its rank and no neighbour in its suit (jokers kept)."""
    if card.rank == 0:
        return -100
    score: int = card.rank
    for other in hand:
        score -= 20 if other.rank == card.rank and other.suit != card.suit else 0
        score -= 15 if other.suit == card.suit and 0 < abs(other.rank - card.rank) <= 2 else 0
    return score


def choose(actions: list[Any], hand: list[Any]) -> Any:
    known = [a for a in actions if a.WhichOneof("kind") in RANKS]
    if not known:
        return None
    best = min(RANKS.index(a.WhichOneof("kind")) for a in known)
    first = [a for a in known if RANKS.index(a.WhichOneof("kind")) == best]
    if first[0].WhichOneof("kind") == "discard":
        return max(first, key=lambda a: loneliness(a.discard.card, hand))
    return first[0]


class Api:
    """The game service's calls with the caller's token, waiting out a rate limit as told."""

    def __init__(self, address: str, token: str) -> None:
        self.stub = game_service_pb2_grpc.GameServiceStub(grpc.insecure_channel(address))
        self.auth = (("authorization", f"Bearer {token}"),)

    def __call__(self, method: str, request: Any) -> Any:
        for _ in range(20):
            try:
                return getattr(self.stub, method)(request, metadata=self.auth, timeout=10)
            except grpc.RpcError as error:
                if error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                    raise
                trailers: Any = error.trailing_metadata() or ()
                time.sleep(int(dict(trailers).get("retry-after-ms", "100")) / 1000)
        raise AssertionError(f"{method}: still rate limited")


def main(address: str, variant: str, players: str, *options: str) -> None:
    api = Api(address, os.environ["MELDSTREAM_TOKEN"])
    request = pb.CreateGameRequest(game_id=f"compat-{uuid.uuid4().hex[:12]}", variant=variant)
    request.player_ids.extend(players.split(","))
    for option in options:
        name, value = option.split("=", 1)
        request.options[name].int_value = int(value)
    game = api("CreateGame", request).game_id
    updates: list[Any] = []
    stream = api.stub.StreamGame(pb.StreamGameRequest(game_id=game, seat=0), metadata=api.auth, timeout=240)
    reader = threading.Thread(target=lambda: updates.extend(u.update for u in stream), daemon=True)
    reader.start()
    actions, deadline = 0, time.monotonic() + 240
    while time.monotonic() < deadline:
        view = api("GetView", pb.GetViewRequest(game_id=game, seat=0)).view
        if view.phase == pb.PHASE_GAME_OVER:
            break
        seat = view.turn
        if seat:
            view = api("GetView", pb.GetViewRequest(game_id=game, seat=seat)).view
        legal = api("ListLegalActions", pb.ListLegalActionsRequest(game_id=game, seat=seat))
        action = choose(list(legal.actions), list(view.hand))
        if action is None:  # between two events of one command: ask again
            time.sleep(0.02)
            continue
        actions += 1
        api(
            "SubmitAction",
            pb.SubmitActionRequest(game_id=game, seat=seat, command_id=f"c{actions}", action=action),
        )
    reader.join(timeout=30)
    assert updates and updates[-1].event_type == "game_ended", f"the stream ended at {updates[-1:]}"
    assert all(update.HasField("view") for update in updates), "an update without its view"
    print(f"ended {game} actions={actions} updates={len(updates)}")


if __name__ == "__main__":
    assert pb.__file__.startswith(os.environ["RELEASED_PROTOS"]), f"today's generated code: {pb.__file__}"
    main(*sys.argv[1:])
