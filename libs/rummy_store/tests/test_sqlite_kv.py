"""SqliteKV answers scoring's commands as Redis does: one script on both, the same replies."""

from __future__ import annotations

from typing import Any

import pytest
import redis
from rummy_store.sqlite_kv import SqliteKV


def _script(r: Any, p: str) -> list[Any]:
    """Every command scoring uses, with the edge cases it relies on (ranges from the end, ties)."""
    replies: list[Any] = [r.get(f"{p}s"), r.set(f"{p}s", "v"), r.get(f"{p}s"), r.set(f"{p}s", b"\x00w")]
    replies += [r.get(f"{p}s"), r.exists(f"{p}s", f"{p}none")]
    replies += [r.rpush(f"{p}l", "a", b"b", 3, 4.5), r.lrange(f"{p}l", 0, -1), r.lrange(f"{p}l", 1, 2)]
    replies += [r.lrange(f"{p}l", -2, -1), r.lrange(f"{p}l", 0, 99), r.lrange(f"{p}l", 5, 9)]
    replies += [r.ltrim(f"{p}l", 2, -1), r.lrange(f"{p}l", 0, -1), r.llen(f"{p}l")]
    replies += [r.ltrim(f"{p}l", 5, -1), r.llen(f"{p}l"), r.rpush(f"{p}l", "c"), r.lrange(f"{p}l", 0, -1)]
    replies += [r.hset(f"{p}h", mapping={"mu": 25.5, "games": 2}), r.hgetall(f"{p}h")]
    replies += [r.hincrby(f"{p}h", "games", 1), r.hincrby(f"{p}h", "new", 3), r.hgetall(f"{p}h")]
    for member, amount in (("b", 1), ("a", 1), ("c", 2), ("a", 3), ("d", 1)):
        replies.append(r.zincrby(f"{p}z", amount, member))
    replies += [r.zrange(f"{p}z", 0, -1, withscores=True), r.zrevrange(f"{p}z", 0, -1, withscores=True)]
    replies += [r.zrevrange(f"{p}z", 1, 2, withscores=True), r.zrange(f"{p}z", 0, 1), r.zcard(f"{p}z")]
    replies += [r.zadd(f"{p}y", {"g1": 3.0, "g2": 1.5}), r.zadd(f"{p}y", {"g1": 4.0, "g3": 2.0})]
    replies += [r.zrevrange(f"{p}y", 0, -1, withscores=True), r.zremrangebyrank(f"{p}y", 0, -3)]
    replies += [r.zrange(f"{p}y", 0, -1), r.zrem(f"{p}y", "g3", "none"), r.zrem(f"{p}y", "g1")]
    replies += [r.type(f"{p}y")]  # the last member gone: the key too
    replies += [
        r.sadd(f"{p}t", "x"),
        r.sadd(f"{p}t", "x"),
        r.sismember(f"{p}t", "x"),
        r.sismember(f"{p}t", "y"),
    ]
    replies += [r.smembers(f"{p}t")]
    replies += [r.type(f"{p}{k}") for k in ("s", "l", "h", "z", "t", "none")]
    replies += [sorted(r.scan_iter(f"{p}*"))]
    r.rpush(f"{p}gone", "x")
    replies += [r.delete(f"{p}gone", f"{p}none"), r.type(f"{p}gone"), r.delete(f"{p}gone")]
    with r.pipeline() as pipe:
        pipe.watch(f"{p}s")
        replies.append(pipe.get(f"{p}s"))  # answered at once before MULTI
        pipe.multi()
        pipe.set(f"{p}s", "after")
        pipe.rpush(f"{p}l", "d")
        replies.append(pipe.execute())
    with r.pipeline() as pipe:  # left without EXEC: nothing queued is applied
        pipe.watch(f"{p}s")
        pipe.multi()
        pipe.set(f"{p}s", "dropped")
    replies += [r.get(f"{p}s"), r.lrange(f"{p}l", 0, -1), r.mget([f"{p}s", f"{p}none"])]
    with r.pipeline() as pipe:  # batched reads inside a watched transaction, as the handlers read
        pipe.watch(f"{p}s", f"{p}h")
        replies.append(pipe.mget([f"{p}s"]))
        with r.pipeline(transaction=False) as reads:
            reads.hgetall(f"{p}h")
            reads.get(f"{p}none")
            reads.sismember(f"{p}t", "x")
            replies.append(reads.execute())
        pipe.multi()
        pipe.set(f"{p}s", "read")
        replies.append(pipe.execute())
    replies.append(r.get(f"{p}s"))
    return replies


@pytest.mark.integration
def test_sqlite_kv_replies_as_redis_does(redis_url: str, unique_prefix: str) -> None:
    client = redis.Redis.from_url(redis_url)
    kv = SqliteKV(":memory:")
    try:
        expected = _script(client, f"{unique_prefix}:")
        assert _script(kv, f"{unique_prefix}:") == expected
    finally:
        client.close()
        kv.close()


def test_sqlite_kv_keeps_what_was_committed_across_reopening(tmp_path: Any) -> None:
    path = tmp_path / "scoring.sqlite"
    kv = SqliteKV(path)
    with kv.pipeline() as pipe:
        pipe.watch("k")
        pipe.multi()
        pipe.set("k", "v")
        pipe.zincrby("z", 2, "ann")
        pipe.execute()
    kv.close()
    again = SqliteKV(path)
    assert again.get("k") == b"v" and again.zrange("z", 0, -1, withscores=True) == [(b"ann", 2.0)]
    again.close()
