"""The load of `make bench-scale`, as its own process: tables of two seats playing through the SDK.

Kept as cheap as a client can be, since it shares the machine's cores with the engines it measures:
each seat follows its stream and sends one of the legal actions the update lists, picked at random
(no rules bot, no extra call per move). Games get explicit random ids, so they spread over every
partition (an engine asked to choose an id picks one of its own partitions). After `--warmup`
seconds it prints `window`, counts the acknowledged actions for `--seconds`, and prints
`done ACTIONS SECONDS`; then it plays on until it is stopped (SIGTERM), so a kill can be measured
under load. `meldstream-go load` (clients/go/load.go) plays the same way for a fraction of the CPU per
action; engine_scale runs this one when the Go client is not built, or with `--load python`.

Both take the seats' player ids and bearer tokens (`--players`, `--tokens`, seat 0 first), as
engine_scale got them from its identity service; seat 0's token creates every game. A person's own
table seats only them and the house bots, so engine_scale seats one person and a house bot (`seats`)
and gives both seats that person's token (the creator plays the house bot's seat). The tokens are
not renewed here: engine_scale's identity issues them to outlive its run.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
import uuid

import grpc
from rummy.game.v1 import game_service_pb2 as gs
from rummy_client import GameClient, RpcFailure
from rummy_contracts.house import house_bots

VARIANT = "rummy40"


def seats(person: str) -> list[str]:
    """The load's two seats: `person` (whose token creates the games and plays both) and a house bot."""
    return [person, *house_bots(2)]


class Load:
    def __init__(self, target: str, tables: int, players: list[str], tokens: list[str]) -> None:
        self._players = players
        self._clients = [
            [GameClient(target, token, retry_for_s=120) for token in tokens] for _ in range(tables)
        ]
        self.acked = 0

    async def run(self) -> None:
        await asyncio.gather(*(self._table(clients) for clients in self._clients))

    async def _table(self, clients: list[GameClient]) -> None:
        while True:
            game_id = uuid.uuid4().hex[:16]
            await clients[0].create_game(VARIANT, self._players, game_id)
            await asyncio.gather(*(self._seat(c, game_id, seat) for seat, c in enumerate(clients)))

    async def _seat(self, client: GameClient, game_id: str, seat: int) -> None:
        rng = random.Random(f"{game_id}/{seat}")
        acted_at = -1
        async for update in client.updates(game_id, seat):
            if update.view.phase == gs.PHASE_GAME_OVER:
                return
            if not update.legal_actions or update.seq <= acted_at:
                continue
            acted_at = update.seq
            try:
                await client.submit(game_id, seat, rng.choice(update.legal_actions))
            except RpcFailure as failure:  # the game moved on meanwhile: the next update says what now
                if failure.status is not grpc.StatusCode.FAILED_PRECONDITION:
                    raise
                continue
            self.acked += 1


async def _main(
    target: str, tables: int, warmup_s: float, seconds: float, *, players: list[str], tokens: list[str]
) -> None:
    load = Load(target, tables, players, tokens)
    playing = asyncio.create_task(load.run())
    await asyncio.sleep(warmup_s)
    print("window", flush=True)
    began, acked = time.perf_counter(), load.acked
    await asyncio.sleep(seconds)
    print(f"done {load.acked - acked} {time.perf_counter() - began:.3f}", flush=True)
    await playing  # until stopped; a table that fails ends the process with its error


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m meldstream_benches.engine_load", description=__doc__)
    parser.add_argument("--target", required=True, help="an engine's address")
    parser.add_argument("--tables", type=int, default=48)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument(
        "--players", required=True, help="the two seats' player ids, seat 0 first, comma-separated"
    )
    parser.add_argument(
        "--tokens", required=True, help="one bearer token per seat, same order, comma-separated"
    )
    args = parser.parse_args(argv)
    players, tokens = args.players.split(","), args.tokens.split(",")
    if len(players) != 2 or len(tokens) != 2 or args.tables < 1:
        parser.error("--players and --tokens name two seats each, and --tables is at least 1")
    asyncio.run(_main(args.target, args.tables, args.warmup, args.seconds, players=players, tokens=tokens))
    return 0


if __name__ == "__main__":
    sys.exit(main())
