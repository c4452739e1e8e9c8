"""Calls that reach an instance not owning their partition are forwarded, server-side, to the owner.

Why forward rather than redirect (the engine refuses with the owner's address and its SDK follows):
matchmaking's and identity's APIs are called by third-party clients in any language with plain gRPC
stubs; forwarding keeps every instance answering every call, so they need no routing logic and one
address (a Kubernetes Service) is enough. The cost is one extra hop for calls that land on a
non-owner.

The owner is found through the `OwnerDirectory` (partition -> address, re-read every few seconds). A
forwarded call carries `meldstream-forwarded`, and an instance never forwards such a call again: it
answers UNAVAILABLE `not_owner` and the forwarding instance looks the owner up again. While a
partition moves (no owner known, the old one killed, the new one still folding) calls wait, retrying
with backoff, for up to `ROUTE_WAIT_S`, then answer UNAVAILABLE.

The marker is signed (`ForwardMarks`), because it is trusted: a forwarded call skips the per-address
rate limit (it was counted where it arrived first) and identity takes the caller's address from it
(`meldstream-client-address`). Any client can send any metadata, so a bare marker would let it escape
every per-address limit and choose the address its sign-ins are counted under. Its value is
`<unix seconds>.<HMAC-SHA256>` over the method, that time and every other `meldstream-*` metadata
entry of the call (the client address, matchmaking's ticket id), with a key only the instances of
that one service hold (`forwarding_key`: identity's from IDENTITY_KEY_SECRET, matchmaking's from
MATCHMAKING_FORWARD_SECRET, each under its own label, so no key is shared across services). Why an
HMAC rather than mutual TLS: mutual TLS (TLS_CLIENT_CA_FILE) is optional, off by default, and shows
only that a caller holds a certificate of the platform's CA (any service's), not that it is an instance
of this service; the plaintext default must be safe too, and a key of one service works on both.
It is good for `MARK_VALID_S` either side of the receiver's clock (the forwarding hop takes
milliseconds; the margin is for clocks apart), so a captured marker is not good for long.

A marker that does not verify (absent, forged, stale, another service's, or bound to other values)
is not refused: the call is treated as a direct one, counted by its address and its
`meldstream-*` metadata ignored, and forwarded on if this instance does not serve its partition.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Final, TypeVar

import grpc

from rummy_service.errors import ServiceError, Unavailable
from rummy_service.tls import PLAINTEXT, Tls

NOT_OWNER: Final = "not_owner"
FORWARDED: Final = "meldstream-forwarded"  # request metadata of a forwarded call: its signed marker
BOUND_PREFIX: Final = "meldstream-"  # the metadata a marker vouches for
MARK_VALID_S: Final = 30  # a marker's validity either side of the receiver's clock
ROUTE_WAIT_S: Final = 30.0  # how long a call waits for its partition's owner
CALL_TIMEOUT_S: Final = 10.0
Context = grpc.aio.ServicerContext[Any, Any]
Resp = TypeVar("Resp")
Owners = Callable[[int], str | None]


class Relayed(ServiceError):
    """The owner's refusal, passed on as it was."""

    def __init__(self, error: grpc.aio.AioRpcError) -> None:
        code, _, message = (error.details() or "").partition(": ")
        super().__init__(code, message)
        self.status = error.code()


def metadata(context: Context, name: str) -> str:
    return next((str(v) for k, v in context.invocation_metadata() or () if k == name), "")


def forwarding_key(secret: str, service: str) -> bytes:
    """The key `service`'s instances sign their forwarded calls with, derived from a secret of that
    service alone under a label of its own (the secret's other uses never see this key)."""
    label = f"meldstream forwarded calls v1: {service}".encode()
    return hmac.new(secret.encode(), label, hashlib.sha256).digest()


Metadata = Iterable[tuple[str, str | bytes]]


class ForwardMarks:
    """Signs the marker of a call forwarded to a peer, and verifies one a call arrives with."""

    def __init__(self, key: bytes, *, valid_s: int = MARK_VALID_S) -> None:
        self._key = key
        self._valid_s = valid_s

    def mark(self, method: str, bound: Metadata, now: float | None = None) -> str:
        """The marker of a forwarded call of `method` (its name, e.g. "SignIn") carrying `bound`."""
        stamp = str(int(time.time() if now is None else now))
        return f"{stamp}.{self._mac(method, stamp, bound)}"

    def verified(self, method: str, metadata: Metadata) -> bool:
        """Whether the call's metadata holds a good marker, made by a peer, for `method` and every
        `meldstream-*` entry it carries."""
        entries = list(metadata)
        value = next((v for k, v in entries if k == FORWARDED), "")
        if not isinstance(value, str) or len(value) > 100:
            return False
        stamp, _, mac = value.partition(".")
        if not (stamp.isascii() and stamp.isdigit() and len(stamp) <= 12):
            return False
        if abs(time.time() - int(stamp)) > self._valid_s:
            return False
        return hmac.compare_digest(mac, self._mac(method, stamp, entries))

    def _mac(self, method: str, stamp: str, bound: Metadata) -> str:
        # gRPC metadata names are lowercase and hold no "=", and values no line breaks: unambiguous.
        entries = sorted(
            f"{k}={v}"
            for k, v in bound
            if k.startswith(BOUND_PREFIX) and k != FORWARDED and isinstance(v, str)
        )
        message = "\n".join([method, stamp, *entries]).encode()
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()


class PartitionRouter:
    """Runs a call here when this instance serves its partition, else at the partition's owner.

    `owned` says which partitions this instance serves now, `owners` where another partition is
    served, `stub` makes the service's stub on a channel to a peer, `marks` signs and verifies the
    marker of forwarded calls with the key this service's instances share.
    """

    def __init__(
        self,
        owned: Callable[[], set[int]],
        owners: Owners,
        stub: Callable[[grpc.aio.Channel], Any],
        *,
        marks: ForwardMarks,
        wait_s: float = ROUTE_WAIT_S,
        tls: Tls = PLAINTEXT,
    ) -> None:
        self._owned = owned
        self._owners = owners
        self._make_stub = stub
        self.marks = marks
        self._wait_s = wait_s
        self._tls = tls  # peers are called as clients are: over TLS when TLS_CA_FILE is set
        self._channels: dict[str, grpc.aio.Channel] = {}

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()

    def serves(self, partition: int) -> bool:
        return partition in self._owned()

    def stub(self, address: str) -> Any:
        channel = self._channels.get(address)
        if channel is None:
            channel = self._channels[address] = self._tls.channel(address)
        return self._make_stub(channel)

    def forwarded(self, context: Context, method: str) -> bool:
        """Whether this call of `method` was forwarded here by a peer (its marker verifies)."""
        return self.marks.verified(method, context.invocation_metadata() or ())

    def forwarded_metadata(
        self, context: Context, method: str, extra: tuple[tuple[str, str], ...]
    ) -> list[Any]:
        passed = [(k, v) for k, v in context.invocation_metadata() or () if k == "authorization"]
        return [*passed, *extra, (FORWARDED, self.marks.mark(method, extra))]

    def deadline(self, context: Context) -> float:
        remaining = context.time_remaining()
        wait = self._wait_s if remaining is None else min(self._wait_s, max(0.0, remaining - 0.5))
        return asyncio.get_running_loop().time() + wait

    def owner(self, partition: int, method: str, context: Context) -> str | None:
        """The address to forward to, None to wait; `not_owner` for a call that was forwarded here."""
        if self.forwarded(context, method):
            raise Unavailable(NOT_OWNER, f"partition {partition} is not served by this instance")
        return self._owners(partition)

    async def unary(
        self,
        partition: int,
        method: str,
        request: Any,
        context: Context,
        local: Callable[[], Awaitable[Resp]],
        *,
        extra: tuple[tuple[str, str], ...] = (),
    ) -> Resp:
        loop = asyncio.get_running_loop()
        deadline = self.deadline(context)
        delay = 0.05
        while True:
            try:
                if self.serves(partition):
                    return await local()
                owner = self.owner(partition, method, context)
                if owner is not None:
                    call = getattr(self.stub(owner), method)
                    passed = self.forwarded_metadata(context, method, extra)
                    answer: Resp = await call(request, metadata=passed, timeout=CALL_TIMEOUT_S)
                    return answer
                failure: ServiceError = Unavailable(NOT_OWNER, f"partition {partition} is moving: retry")
            except Unavailable as exc:
                if exc.code != NOT_OWNER or self.forwarded(context, method):
                    raise
                failure = exc
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.UNAVAILABLE:
                    raise Relayed(error) from None
                failure = Relayed(error)  # the owner is away or refused as not_owner: look again
            if loop.time() + delay > deadline:
                raise failure
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.5)
