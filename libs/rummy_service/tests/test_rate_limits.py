"""The limiter: counts in Redis shared by instances, in memory without Redis or while it is away."""

from __future__ import annotations

import asyncio
import time

import pytest
from limits import parse_many
from rummy_service.config import ConfigError
from rummy_service.rate_limits import Limiter, LimitSettings, RateLimited, load_limits

FIVE = parse_many("5/second")


async def calls(limiter: Limiter, key: str, count: int) -> list[float | None]:
    return [await limiter.retry_after(FIVE, "account", key) for _ in range(count)]


@pytest.mark.integration
def test_two_instances_share_one_count_in_redis(redis_url: str, unique_prefix: str) -> None:
    async def scenario() -> None:
        first, second = Limiter(redis_url, unique_prefix), Limiter(redis_url, unique_prefix)
        answers = await calls(first, "ann", 3) + await calls(second, "ann", 3)
        assert answers[:5] == [None] * 5 and answers[5] is not None and 0 < answers[5] <= 1.0
        assert await calls(second, "bob", 5) == [None] * 5  # another account is untouched
        await first.close()
        await second.close()

    asyncio.run(scenario())


def test_without_redis_each_instance_counts_alone_and_play_never_stops() -> None:
    async def scenario() -> None:
        alone = Limiter()
        assert (await calls(alone, "ann", 6))[5] is not None
        away = Limiter("redis://127.0.0.1:1/0")  # nothing listens: counted in memory, no error
        began = time.monotonic()
        answers = await calls(away, "ann", 6)
        assert answers[:5] == [None] * 5 and answers[5] is not None
        assert time.monotonic() - began < 3  # one failed attempt, then memory for a while

    asyncio.run(scenario())


def test_failures_are_counted_apart_from_the_calls_they_limit() -> None:
    async def scenario() -> None:
        limiter = Limiter()
        for _ in range(5):
            assert await limiter.blocked(FIVE, "failed", "ann") is None
            await limiter.count(FIVE, "failed", "ann")
        assert await limiter.blocked(FIVE, "failed", "ann") is not None
        assert await limiter.blocked(FIVE, "failed", "bob") is None

    asyncio.run(scenario())


def test_the_refusal_carries_the_delay_for_clients_and_for_grpc_retries() -> None:
    refusal = RateLimited(1.2345, "account")
    assert refusal.code == "rate_limited" and refusal.status.name == "RESOURCE_EXHAUSTED"
    assert dict(refusal.trailers) == {"retry-after-ms": "1234", "grpc-retry-pushback-ms": "1234"}


def test_limits_are_configured_in_the_limits_notation() -> None:
    assert load_limits({}) == LimitSettings()
    assert load_limits({"MELDSTREAM_LIMIT_PER_ACCOUNT": "10/second;100/minute"}).per_account[1].amount == 100
    with pytest.raises(ConfigError, match="MELDSTREAM_LIMIT_PER_ADDRESS"):
        load_limits({"MELDSTREAM_LIMIT_PER_ADDRESS": "lots"})
