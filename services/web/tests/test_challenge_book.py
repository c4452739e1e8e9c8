"""The challenge book (challenge_book.py) in Redis, as two gateway replicas share it, and in memory: the
first decision wins whichever replica takes it, an undone one leaves the challenge open, each account
sees its own challenges, and an expired challenge is gone."""

from __future__ import annotations

import asyncio
import time

import pytest
from meldstream_web.challenge_book import Challenge, ChallengeBook, Decision, MemoryBook, RedisBook

pytestmark = pytest.mark.integration


def _challenge(number: int, ttl_s: float = 60.0) -> Challenge:
    return Challenge(
        id=f"ch-{number}",
        table_id=f"pt-secret-{number}",
        challenger="ann",
        challenger_name="<b>Ann</b>",
        challenger_bot=True,
        challenged="bo" if number % 2 else "cy",
        variant="kalooki",
        options={},
        turn_timeout_ms=0,
        expires_at=time.time() + ttl_s,
    )


async def _scenario(one: ChallengeBook, two: ChallengeBook) -> None:
    """`one` and `two` are two replicas' views of one book."""
    for number in (1, 2, 3):
        await one.add(_challenge(number))
    await one.add(_challenge(4, ttl_s=0.3))
    first = await two.get("ch-1")
    assert first is not None and first.challenger_name == "<b>Ann</b>"
    assert "table_id" not in first.public() and first.public()["status"] == "created"
    assert await two.decide(first, Decision("declined", reason="later"))
    assert not await one.decide(first, Decision("accepted"))  # the first decision stands
    declined = await one.get("ch-1")
    assert declined is not None and (declined.status, declined.reason) == ("declined", "later")
    second = await one.get("ch-3")
    assert second is not None and await one.decide(second, Decision("accepted"))
    await two.amend(second, None)  # the join failed: open again
    reopened = await one.get("ch-3")
    assert reopened is not None and reopened.status == "created"
    assert await one.decide(second, Decision("accepted"))
    await two.amend(second, Decision("accepted", game_id="pt-game"))
    accepted = await one.get("ch-3")
    assert accepted is not None and accepted.game_id == "pt-game"
    assert sorted(c.id for c in await two.of_account("bo")) == ["ch-1", "ch-3"]
    assert sorted(c.id for c in await two.of_account("cy")) == ["ch-2", "ch-4"]
    assert len(await one.of_account("ann")) == 4
    await asyncio.sleep(0.5)
    assert await two.get("ch-4") is None and [c.id for c in await one.of_account("cy")] == ["ch-2"]
    assert await one.get("ch-nope") is None


def test_two_replicas_share_one_book_in_redis(redis_url: str, unique_prefix: str) -> None:
    async def run() -> None:
        one, two = (RedisBook(redis_url, prefix=f"{unique_prefix}:") for _ in range(2))
        try:
            await _scenario(one, two)
        finally:
            await one.close()
            await two.close()

    asyncio.run(run())


def test_one_gateway_s_book_in_memory() -> None:
    book = MemoryBook()
    asyncio.run(_scenario(book, book))
