"""Signing in, and access tokens that stay fresh: the identity service from a client's side.

`IdentityClient` is the identity service's API (sign up, sign in, guest, refresh, exchange). A
`RenewingToken` holds what a client keeps for long (a session's refresh token, a bot's personal API
token or a service's credential) and the access token it last got for it: called for each request
(`GameClient` takes it in place of a token), it answers the current access token and, once half of
its life has passed, fetches the next one in a thread, so no call waits for it and none carries an
expired token. Only a token already past its expiry (a laptop woken from sleep) is renewed in line.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import grpc
from rummy.identity.v1 import identity_pb2 as pb
from rummy.identity.v1 import identity_pb2_grpc as pb_grpc

from rummy_client.rate_limits import retry_after

log = logging.getLogger("rummy_client")
EARLY_S: Final = 5.0  # an access token this close to its expiry is renewed before it is sent
CALL_TIMEOUT_S: Final = 10.0
RATE_LIMIT_WAIT_MAX_S: Final = 2.0  # a call refused by a rate limit is sent again when it asks at most this
RATE_LIMIT_BUDGET_S: Final = 10.0  # ... and until the waits add up to this


@dataclass(frozen=True, slots=True)
class Grant:
    """An access token and when it expires (Unix seconds)."""

    token: str
    expires_at: float


Renew = Callable[[], Grant]


class RenewingToken:
    """The current access token for one long-lived credential (see the module docstring)."""

    def __init__(
        self, renew: Renew, first: Grant | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self._renew = renew
        self._clock = clock
        self._lock = threading.Lock()
        self._grant = first
        self._issued_at = clock()
        self._renewing = False

    def __call__(self) -> str:
        now = self._clock()
        with self._lock:
            grant, issued = self._grant, self._issued_at
            if grant is None or now >= grant.expires_at - EARLY_S:
                grant = self._fetch_locked()
            elif now >= issued + (grant.expires_at - issued) / 2 and not self._renewing:
                self._renewing = True
                threading.Thread(target=self._background, name="token-renewal", daemon=True).start()
        return grant.token

    @property
    def must_fetch(self) -> bool:
        """Whether the next call waits for identity (no token yet, or too close to its expiry): an
        event loop asks it off the loop then, as identity may be served by that very loop."""
        grant = self._grant
        return grant is None or self._clock() >= grant.expires_at - EARLY_S

    @property
    def expires_at(self) -> float:
        """When the access token last answered expires (Unix seconds; 0 before the first)."""
        return self._grant.expires_at if self._grant is not None else 0.0

    def _fetch_locked(self) -> Grant:
        grant = self._renew()
        self._grant, self._issued_at = grant, self._clock()
        return grant

    def _background(self) -> None:
        try:
            grant = self._renew()
        except Exception as exc:  # the token in hand is still good: the next call tries again
            log.warning("renewing an access token failed (retried at the next call): %s", exc)
            with self._lock:
                self._renewing = False
            return
        with self._lock:
            self._grant, self._issued_at, self._renewing = grant, self._clock(), False


class IdentityClient:
    """The identity service's calls a client makes, over one channel (blocking: sign-in is rare)."""

    def __init__(
        self,
        target: str,
        *,
        credentials: grpc.ChannelCredentials | None = None,
        options: Sequence[tuple[str, str]] = (),
    ) -> None:
        self.target = target
        self._channel = (
            grpc.insecure_channel(target, options=list(options))
            if credentials is None
            else grpc.secure_channel(target, credentials, options=list(options))
        )
        self._stub: Any = pb_grpc.IdentityServiceStub(self._channel)

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> IdentityClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def sign_up(self, name: str, password: str, display_name: str = "", device: str = "sdk") -> pb.Session:
        request = pb.SignUpRequest(name=name, password=password, display_name=display_name, device=device)
        reply: pb.SignUpResponse = self._unary("SignUp", request)
        return reply.session

    def sign_in(self, name: str, password: str, device: str = "sdk") -> pb.Session:
        request = pb.SignInRequest(name=name, password=password, device=device)
        reply: pb.SignInResponse = self._unary("SignIn", request)
        return reply.session

    def guest(self, display_name: str = "") -> pb.Session:
        request = pb.SignInAsGuestRequest(display_name=display_name)
        reply: pb.SignInAsGuestResponse = self._unary("SignInAsGuest", request)
        return reply.session

    def refresh(self, refresh_token: str) -> Grant:
        reply: pb.RefreshResponse = self._unary("Refresh", pb.RefreshRequest(refresh_token=refresh_token))
        return Grant(reply.access_token, reply.access_expires_at)

    def exchange(self, api_token: str) -> Grant:
        """An access token for a personal API token or a service credential."""
        reply: pb.ExchangeApiTokenResponse = self._unary(
            "ExchangeApiToken", pb.ExchangeApiTokenRequest(api_token=api_token)
        )
        return Grant(reply.access_token, reply.access_expires_at)

    def sign_out(self, refresh_token: str) -> int:
        reply: pb.SignOutResponse = self._unary("SignOut", pb.SignOutRequest(refresh_token=refresh_token))
        return reply.ended

    def call(self, method: str, request: Any, token: str | Callable[[], str] = "") -> Any:
        """Any other call of the service, with the caller's access token ("" for none)."""
        bearer = token() if callable(token) else token
        metadata = (("authorization", f"Bearer {bearer}"),) if bearer else ()
        return self._unary(method, request, metadata)

    def _unary(self, method: str, request: Any, metadata: Sequence[tuple[str, str]] = ()) -> Any:
        """One call, sent again after the delay a rate limit asks for while that is short: a burst of
        sign-ups from one address (a test suite, a room of players behind one NAT) waits, not fails.
        The waits grow (a sliding window may refuse again at the delay it named) within a budget."""
        waited, attempt = 0.0, 0
        while True:
            try:
                return getattr(self._stub, method)(request, metadata=metadata, timeout=CALL_TIMEOUT_S)
            except grpc.RpcError as error:
                asked = retry_after(error)
                if asked is None or asked > RATE_LIMIT_WAIT_MAX_S or waited >= RATE_LIMIT_BUDGET_S:
                    raise
                wait = max(asked, min(0.05 * 2**attempt, 1.0))
                time.sleep(wait)
                waited, attempt = waited + wait, attempt + 1

    # --- tokens that stay fresh ---------------------------------------------------------------------

    def session_token(self, session: pb.Session) -> RenewingToken:
        """The access token of a session signed in here, renewed with its refresh token."""
        first = Grant(session.access_token, session.access_expires_at)
        return RenewingToken(lambda: self.refresh(session.refresh_token), first)

    def api_token(self, api_token: str) -> RenewingToken:
        """Access tokens for a personal API token or a service credential, fetched when needed."""
        return RenewingToken(lambda: self.exchange(api_token))
