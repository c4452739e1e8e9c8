"""How often an account, or an address, may call: sliding-window counters shared by every instance.

The counters are the `limits` library's (a well-kept implementation of fixed, moving and sliding
windows over Redis or memory; `SlidingWindowCounterRateLimiter`, one round trip a check). A call with
a valid bearer token counts against its account (`MELDSTREAM_LIMIT_PER_ACCOUNT`, 30 a second by
default), any other against its address (`MELDSTREAM_LIMIT_PER_ADDRESS`, 100 a second), so a burst from
one account is refused while another plays on. Over a limit a gRPC call is RESOURCE_EXHAUSTED
`rate_limited` with the delay in trailing metadata (`retry-after-ms`, and gRPC's own
`grpc-retry-pushback-ms`, which grpc's retry policy honours); the web gateway answers 429 with
Retry-After.

Shared in Redis when the service has one, so the limit is the platform's, not each instance's. With no
Redis (the embedded default), or while Redis does not answer, each instance counts in its own memory:
play never stops because the limiter's store is away. The moves of a game (a service's `local_only`
methods: SubmitAction, GetView, ListLegalActions) have their own limit (`MELDSTREAM_LIMIT_MOVES`, 100 a
second per account at each engine), counted in memory always: they are the hot path, and a round trip
to Redis per move would cost more than the move (an account's moves reach the engines owning its
games, so each bounds its own share).
A forwarded call is counted where it arrives first, by account; its address there is the forwarding
instance's, so addresses are counted at the first hop only. Only a call whose marker verifies
(`rummy_service.forwarding.ForwardMarks`, signed with the key the service's instances share) is taken
as forwarded: a client sending `meldstream-forwarded` itself is counted by its address like any
other, and a service that forwards nothing (no `forwards`) takes no call as forwarded.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import grpc
import redis.asyncio
from limits import RateLimitItem, parse_many
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import SlidingWindowCounterRateLimiter

from rummy_service.auth import AuthError, TokenVerifier, bearer
from rummy_service.config import ConfigError, env_str
from rummy_service.errors import ServiceError, abort
from rummy_service.forwarding import ForwardMarks

log = logging.getLogger("rummy_service")
Context = grpc.aio.ServicerContext[Any, Any]
if TYPE_CHECKING:
    Handler = grpc.RpcMethodHandler[Any, Any]

ACCOUNT_VARIABLE: Final = "MELDSTREAM_LIMIT_PER_ACCOUNT"
MOVES_VARIABLE: Final = "MELDSTREAM_LIMIT_MOVES"
ADDRESS_VARIABLE: Final = "MELDSTREAM_LIMIT_PER_ADDRESS"
DEFAULT_ACCOUNT: Final = "30/second"
DEFAULT_ADDRESS: Final = "100/second"
DEFAULT_MOVES: Final = "100/second"
RETRY_TRAILER: Final = "retry-after-ms"
PUSHBACK_TRAILER: Final = "grpc-retry-pushback-ms"
AWAY_S: Final = 5.0  # after Redis failed, counted locally this long before Redis is asked again


class RateLimited(ServiceError):
    """Over a limit: RESOURCE_EXHAUSTED `rate_limited`, the delay in the trailers."""

    status = grpc.StatusCode.RESOURCE_EXHAUSTED

    def __init__(self, retry_after_s: float, what: str) -> None:
        ms = max(1, round(retry_after_s * 1000))
        super().__init__(
            "rate_limited",
            f"too many calls from this {what}: retry in {ms} ms"
            if ms < 1000
            else f"too many calls from this {what}: retry in {ms / 1000:.1f} s",
            ((RETRY_TRAILER, str(ms)), (PUSHBACK_TRAILER, str(ms))),
        )
        self.retry_after_s = ms / 1000


@dataclass(frozen=True, slots=True)
class LimitSettings:
    """The limits as configured (`limits` notation: `30/second`, or several joined by `;`)."""

    account: str = DEFAULT_ACCOUNT
    address: str = DEFAULT_ADDRESS
    moves: str = DEFAULT_MOVES  # an account's moves (`local_only` calls) at one instance

    @property
    def per_account(self) -> tuple[RateLimitItem, ...]:
        return tuple(parse_many(self.account))

    @property
    def per_address(self) -> tuple[RateLimitItem, ...]:
        return tuple(parse_many(self.address))

    @property
    def per_moves(self) -> tuple[RateLimitItem, ...]:
        return tuple(parse_many(self.moves))

    def to_env(self) -> dict[str, str]:
        return {ACCOUNT_VARIABLE: self.account, ADDRESS_VARIABLE: self.address, MOVES_VARIABLE: self.moves}


def _checked_limit(name: str, env: Mapping[str, str] | None, default: str) -> str:
    raw = env_str(name, default, env)
    try:
        parse_many(raw)
    except ValueError:
        raise ConfigError(
            f"{name}={raw[:40]!r} is not a rate limit such as 30/second or 30/second;600/minute"
        ) from None
    return raw


def load_limits(env: Mapping[str, str] | None = None) -> LimitSettings:
    """MELDSTREAM_LIMIT_PER_ACCOUNT, MELDSTREAM_LIMIT_PER_ADDRESS and MELDSTREAM_LIMIT_MOVES."""
    return LimitSettings(
        _checked_limit(ACCOUNT_VARIABLE, env, DEFAULT_ACCOUNT),
        _checked_limit(ADDRESS_VARIABLE, env, DEFAULT_ADDRESS),
        _checked_limit(MOVES_VARIABLE, env, DEFAULT_MOVES),
    )


class Limiter:
    """Counters in Redis at `redis_url` (none: this process's memory), falling back to memory while
    Redis does not answer."""

    def __init__(self, redis_url: str = "", prefix: str = "") -> None:
        self._local = SlidingWindowCounterRateLimiter(MemoryStorage())
        self._shared: SlidingWindowCounterRateLimiter | None = None
        self._pool: redis.asyncio.ConnectionPool | None = None
        if redis_url:
            # Our own pool, so `close` ends its connections with the service (the storage has no close).
            self._pool = redis.asyncio.ConnectionPool.from_url(redis_url, socket_timeout=0.5)
            pool: Any = self._pool  # the storage passes its options on to redis-py, typed as scalars
            storage: Storage = RedisStorage(
                "async+" + redis_url,
                implementation="redispy",
                key_prefix=f"{prefix}limits",
                connection_pool=pool,
            )
            self._shared = SlidingWindowCounterRateLimiter(storage)
        self._away_until = 0.0

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.aclose()

    async def retry_after(
        self, items: Iterable[RateLimitItem], *key: str, local: bool = False
    ) -> float | None:
        """None when a call under `key` may go ahead (it is counted), else the seconds until it may."""
        limiter = self._local if local or time.monotonic() < self._away_until else self._shared or self._local
        try:
            return await self._check(limiter, items, key)
        except Exception as exc:  # Redis away: this instance's counts, for a while
            if limiter is self._local:
                raise
            log.warning("rate limits counted locally for %.0f s: Redis did not answer (%s)", AWAY_S, exc)
            self._away_until = time.monotonic() + AWAY_S
            return await self._check(self._local, items, key)

    async def blocked(self, items: Iterable[RateLimitItem], *key: str) -> float | None:
        """Like `retry_after`, without counting: for limits on failures, counted by `count`."""
        limiter = self._shared if self._shared is not None and time.monotonic() >= self._away_until else None
        for candidate in (limiter, self._local) if limiter is not None else (self._local,):
            try:
                for item in items:
                    if not await candidate.test(item, *key):
                        stats = await candidate.get_window_stats(item, *key)
                        return max(0.001, stats.reset_time - time.time())
                return None
            except Exception as exc:
                log.warning("rate limits counted locally for %.0f s: Redis did not answer (%s)", AWAY_S, exc)
                self._away_until = time.monotonic() + AWAY_S
        return None

    async def count(self, items: Iterable[RateLimitItem], *key: str) -> None:
        """Count one under `key` (a failure), whatever the limit says."""
        limiter = self._shared if self._shared is not None and time.monotonic() >= self._away_until else None
        try:
            for item in items:
                await (limiter or self._local).hit(item, *key)
        except Exception:
            self._away_until = time.monotonic() + AWAY_S
            for item in items:
                await self._local.hit(item, *key)

    @staticmethod
    async def _check(
        limiter: SlidingWindowCounterRateLimiter, items: Iterable[RateLimitItem], key: tuple[str, ...]
    ) -> float | None:
        for item in items:
            if not await limiter.hit(item, *key):
                stats = await limiter.get_window_stats(item, *key)
                return max(0.001, stats.reset_time - time.time())
        return None


def peer_address(context: Context) -> str:
    """The caller's address without its port ("ipv4:10.0.0.5:41234" -> "10.0.0.5")."""
    peer = context.peer() or ""
    kind, _, rest = peer.partition(":")
    if kind == "ipv6":
        return rest.rpartition("]")[0].lstrip("[") or rest
    return rest.rpartition(":")[0] or peer


class RateLimiting(grpc.aio.ServerInterceptor):
    """Checks every call of the service's own methods against the limits before it runs.

    `tokens` verifies a call's bearer token (the verification is cached, so this costs a lookup); a
    method of `local_only` is counted in memory only; `forwards` verifies the marker of a call a peer
    instance forwarded (None: the service forwards nothing, so no call is taken as forwarded).
    """

    def __init__(
        self,
        limiter: Limiter,
        limits: LimitSettings,
        tokens: TokenVerifier | None,
        *,
        services: Iterable[str],
        local_only: Iterable[str] = (),
        forwards: ForwardMarks | None = None,
    ) -> None:
        self._limiter = limiter
        self._account = limits.per_account
        self._address = limits.per_address
        self._moves = limits.per_moves
        self._tokens = tokens
        self._services = tuple(f"/{name}/" for name in services)
        self._local = frozenset(local_only)
        self._forwards = forwards
        self._handlers: dict[str, Handler] = {}

    async def close(self) -> None:
        await self._limiter.close()

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Handler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Handler | None:
        handler = await continuation(handler_call_details)
        method = handler_call_details.method
        if handler is None or handler.request_streaming or not method.startswith(self._services):
            return handler
        wrapped = self._handlers.get(method)
        if wrapped is None:
            name = method.rpartition("/")[2]
            local = name in self._local
            wrapped = self._handlers[method] = _checked(handler, lambda c: self._check(c, name, local))
        return wrapped

    async def _check(self, context: Context, method: str, local: bool) -> None:
        metadata = context.invocation_metadata() or ()
        subject = ""
        if self._tokens is not None:
            with contextlib.suppress(AuthError):  # the servicer refuses it; counted by address here
                subject = self._tokens.verify(bearer(metadata), time.time()).subject
        if subject:
            items, scope = (self._moves, "moves") if local else (self._account, "account")
            wait = await self._limiter.retry_after(items, scope, subject, local=local)
            what = "account"
        elif self._forwards is not None and self._forwards.verified(method, metadata):
            return  # a peer's forward: counted at the instance it reached first
        else:
            address = peer_address(context)
            wait = await self._limiter.retry_after(self._address, "address", address, local=local)
            what = "address"
        if wait is not None:
            raise RateLimited(wait, what)


def _checked(handler: Handler, check: Callable[[Context], Awaitable[None]]) -> Handler:
    """`handler` with `check` before it (its refusal ends the call with its status)."""
    if not handler.response_streaming:
        behaviour: Any = handler.unary_unary

        async def unary(request: Any, context: Context) -> Any:
            try:
                await check(context)
            except ServiceError as exc:
                await abort(context, exc)
            return await behaviour(request, context)

        return grpc.unary_unary_rpc_method_handler(
            unary, handler.request_deserializer, handler.response_serializer
        )
    streaming: Any = handler.unary_stream

    async def stream(request: Any, context: Context) -> AsyncIterator[Any]:
        try:
            await check(context)
        except ServiceError as exc:
            await abort(context, exc)
        async for response in streaming(request, context):
            yield response

    return grpc.unary_stream_rpc_method_handler(
        stream, handler.request_deserializer, handler.response_serializer
    )
