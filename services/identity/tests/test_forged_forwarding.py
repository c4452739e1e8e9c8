"""A client cannot pass for a peer instance: its own `meldstream-forwarded` and
`meldstream-client-address` metadata make a direct call, counted by its real address, and its sign-ins
are counted under that address, not the one it names (a real identity process, real gRPC)."""

from __future__ import annotations

import uuid

import grpc
import pytest
from rummy.identity.v1 import identity_pb2 as pb
from rummy.identity.v1 import identity_pb2_grpc as pb_grpc
from rummy_identity.accounts import FAILED_FROM_ONE_ADDRESS
from rummy_identity.server import CLIENT_ADDRESS
from rummy_identity.testing import PASSWORD, running_identity
from rummy_service.forwarding import FORWARDED


def _forged(address: str) -> tuple[tuple[str, str], ...]:
    return ((FORWARDED, "1"), (CLIENT_ADDRESS, address))


def test_forged_forwarding_metadata_is_counted_by_the_callers_real_address() -> None:
    allowed = FAILED_FROM_ONE_ADDRESS[0].amount  # failed sign-ins to one account from one address
    with (
        running_identity({"MELDSTREAM_LIMIT_PER_ADDRESS": f"{allowed + 4}/minute"}) as identity,
        grpc.insecure_channel(identity.address) as channel,
    ):
        stub = pb_grpc.IdentityServiceStub(channel)
        name = f"f{uuid.uuid4().hex[:10]}"
        stub.SignUp(pb.SignUpRequest(name=name, password=PASSWORD, device="tests"))  # call 1
        # Wrong passwords, each claiming another address: all are this caller's, so the account's
        # limit of failures from one address stops them (the limit from anywhere is higher).
        wrong = pb.SignInRequest(name=name, password="not-the-password", device="tests")
        for i in range(allowed):  # calls 2 .. allowed + 1
            with pytest.raises(grpc.RpcError) as failed:
                stub.SignIn(wrong, metadata=_forged(f"203.0.113.{i}"))
            assert failed.value.code() == grpc.StatusCode.UNAUTHENTICATED
        with pytest.raises(grpc.RpcError) as slowed:  # call allowed + 2
            stub.SignIn(wrong, metadata=_forged("198.51.100.1"))
        assert slowed.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "account's failed sign-ins" in (slowed.value.details() or "")
        # The per-address limit of every call counts forged forwards too: two more go, the next not.
        for _ in range(2):  # calls allowed + 3, allowed + 4
            stub.GetJwks(pb.GetJwksRequest(), metadata=_forged("198.51.100.2"))
        with pytest.raises(grpc.RpcError) as limited:
            stub.GetJwks(pb.GetJwksRequest(), metadata=_forged("198.51.100.3"))
        assert limited.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "address" in (limited.value.details() or "")
