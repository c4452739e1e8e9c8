"""The bot runner's bookkeeping in Redis, without a game: a game whose lease another replica holds is
left to it, and a record nobody can use (unreadable, or a day old) is dropped rather than retried for
ever. The takeover itself, with real replicas and a real game: tests/e2e/test_gateway_bot_takeover.py."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
import redis.asyncio
from meldstream_web.bot_runner import MAX_AGE_S, BotRunner

pytestmark = pytest.mark.integration


def test_held_games_are_left_and_unusable_records_dropped(redis_url: str, unique_prefix: str) -> None:
    async def scenario() -> tuple[list[bytes | str], list[str]]:
        games = f"{unique_prefix}:web:bots"
        store = redis.asyncio.from_url(redis_url)
        fresh = json.dumps({"seats": [1], "pace_s": 0.1, "at": int(time.time())})
        old = json.dumps({"seats": [1], "pace_s": 0.1, "at": int(time.time() - MAX_AGE_S - 60)})
        await store.hset(games, mapping={"held": fresh, "old": old, "garbled": "{not json"})
        await store.set(f"{games}:held", "another-replica", px=60_000)
        runner = BotRunner("127.0.0.1:1", lambda: "token", redis_url, prefix=f"{unique_prefix}:")
        try:
            await runner.tick()
            left = await store.hgetall(games)
            return list(left), runner.seats.games()
        finally:
            await runner.stop()
            await store.delete(games, f"{games}:held")
            await store.aclose()

    left, playing = asyncio.run(scenario())
    assert left == [b"held"] and playing == []
