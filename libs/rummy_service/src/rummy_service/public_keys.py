"""The identity service's public keys, fetched over gRPC by every service that verifies tokens.

A service is given identity's address (IDENTITY_ADDRESS) and nothing secret: it asks GetJwks for the
key set and keeps it as long as the answer says (`max_age_s`), so a key identity publishes ahead of
signing with it is known here before any token carries it.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

import grpc
from rummy.identity.v1 import identity_pb2 as pb
from rummy.identity.v1 import identity_pb2_grpc as pb_grpc

from rummy_service.auth import Jwks, TokenVerifier
from rummy_service.tls import PLAINTEXT, Tls

IDENTITY_VARIABLE: Final = "IDENTITY_ADDRESS"
DEFAULT_IDENTITY: Final = "127.0.0.1:50054"
FETCH_TIMEOUT_S: Final = 3.0


class IdentityKeys:
    """Fetches the key set from identity at `address` (a channel opened on first use)."""

    def __init__(self, address: str, tls: Tls = PLAINTEXT) -> None:
        self.address = address
        self._tls = tls
        self._channel: grpc.Channel | None = None

    def fetch(self) -> tuple[str, float]:
        if self._channel is None:
            credentials = self._tls.channel_credentials()
            options = list(self._tls.channel_options())
            self._channel = (
                grpc.insecure_channel(self.address, options=options)
                if credentials is None
                else grpc.secure_channel(self.address, credentials, options=options)
            )
        stub: Any = pb_grpc.IdentityServiceStub(self._channel)
        try:
            reply: pb.GetJwksResponse = stub.GetJwks(pb.GetJwksRequest(), timeout=FETCH_TIMEOUT_S)
        except grpc.RpcError as error:
            raise ConnectionError(
                f"identity at {self.address} did not give its keys ({error.code().name})"
            ) from None
        return reply.jwks, float(reply.max_age_s)

    def close(self) -> None:
        if self._channel is not None:
            self._channel.close()


def verifier(address: str, tls: Tls = PLAINTEXT) -> TokenVerifier:
    """A verifier of access tokens with identity's keys at `address` (fetched on first use)."""
    return TokenVerifier(Jwks(IdentityKeys(address, tls).fetch))


async def keys_ready(tokens: TokenVerifier) -> bool:
    """Whether the verifier holds keys, fetching them (off the loop) if not: for a service's health
    probe (a service that cannot check a token cannot serve a call) and before a call is verified."""
    return tokens.jwks.loaded or await asyncio.to_thread(tokens.jwks.load_if_missing)
