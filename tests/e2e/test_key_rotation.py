"""Signing keys rotate while games run, and no call fails: players' tokens renew through the rotation,
the engine learns each new key before a token carries it, and tokens of the old key stay good."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from rummy.identity.v1 import identity_pb2 as pb
from rummy_client import GameClient
from rummy_client.bots import BotPlayer
from rummy_engine.config import EngineConfig
from rummy_engine.engine import start_engine
from rummy_identity.testing import running_identity

pytestmark = pytest.mark.integration


def test_keys_rotate_while_games_run_and_no_call_fails(tmp_path: Path) -> None:
    # Tokens of 10 s renewed at half-life (5 s), keys published 2 s before they sign: two rotations, then
    # a renewal signed by the newest key, fall inside a few games, old-key tokens still in use.
    with running_identity({"IDENTITY_ACCESS_TTL_S": "10", "IDENTITY_KEY_LEAD_S": "2"}) as identity:
        players = [identity.player(name) for name in ("rot-ann", "rot-bob")]
        ops = identity.operator()

        async def scenario() -> None:
            engine = await start_engine(
                EngineConfig(address="127.0.0.1:0", data_dir=str(tmp_path), identity=identity.address)
            )
            try:
                operator = GameClient(engine.address, ops.token, retry_for_s=0)
                seats = [GameClient(engine.address, p.token, retry_for_s=0, pace_s=0.02) for p in players]
                ids = [p.id for p in players]
                kids: set[str] = set()

                async def rotate() -> None:
                    for _ in range(2):
                        await asyncio.sleep(1)
                        rotated = await asyncio.to_thread(
                            identity.call, "RotateSigningKey", pb.RotateSigningKeyRequest(), ops.token
                        )
                        kids.add(rotated.kid)

                rotating = asyncio.create_task(rotate())
                began = time.monotonic()
                games = 0
                while time.monotonic() - began < 7 or not rotating.done():
                    game = f"rot-{games}"
                    await operator.create_game("rummy40", ids, game, options={"deals_per_match": 1})
                    bots = [BotPlayer(client, game, seat) for seat, client in enumerate(seats)]
                    await asyncio.gather(*(bot.play() for bot in bots))  # any refused call raises
                    games += 1
                await rotating
                assert len(kids) == 2 and games >= 2
                assert sum(client.retries for client in seats) == 0  # nothing was even retried
                for client in (operator, *seats):
                    await client.close()
            finally:
                await engine.stop()

        asyncio.run(scenario())
