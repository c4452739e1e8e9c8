"""Identity's checks of an OpenID provider's ID tokens (rummy_identity.provider), with forged tokens.

The provider's part is played here, for the refusals only, by a few lines of HTTP on loopback serving a
discovery document and a key set this test made; every token is signed by the test. A genuine token of
that provider is the control that shows each forgery fails for its own reason. The real provider's
sign-in, end to end in a browser, is tests/browser/test_provider_sign_in.py.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from joserfc import jwt
from joserfc.jwk import ECKey, RSAKey
from rummy.identity.v1 import identity_pb2 as pb
from rummy_identity import names
from rummy_identity.accounts import provider_name
from rummy_identity.loopback_provider import LoopbackProvider, serving
from rummy_identity.provider import (
    Provider,
    ProviderSettings,
    access_token_hash,
    check_issuer,
    display_name_of,
)
from rummy_identity.testing import PASSWORD, IdentityProcess, running_identity
from rummy_service.config import ConfigError
from rummy_service.errors import Unauthenticated, Unavailable

CLIENT = "meldstream-web"
NONCE = "n-0S6_WzA2Mj"


@pytest.fixture(scope="module")
def fake() -> Iterator[LoopbackProvider]:
    with serving() as served:
        yield served


@dataclass
class Keys:
    rsa: RSAKey
    ec: ECKey
    other: RSAKey  # a key the provider never published

    def published(self) -> list[dict[str, Any]]:
        return [
            {**self.rsa.as_dict(private=False), "kid": "rsa-1", "use": "sig", "alg": "RS256"},
            {**self.ec.as_dict(private=False), "kid": "ec-1", "use": "sig"},
        ]


@pytest.fixture(scope="module")
def keys(fake: LoopbackProvider) -> Keys:
    made = Keys(RSAKey.generate_key(2048), ECKey.generate_key("P-256"), RSAKey.generate_key(2048))
    fake.keys = made.published()
    return made


def claims(fake: LoopbackProvider, **changes: Any) -> dict[str, Any]:
    now = int(time.time())
    base = {
        "iss": fake.issuer,
        "sub": "user-1",
        "aud": [CLIENT],
        "exp": now + 300,
        "iat": now,
        "nonce": NONCE,
        "name": "Test User",
    }
    base.update(changes)
    return {k: v for k, v in base.items() if v is not None}


def signed(key: RSAKey | ECKey, body: dict[str, Any], kid: str = "rsa-1", alg: str = "RS256") -> str:
    return jwt.encode({"alg": alg, "kid": kid}, body, key, algorithms=[alg])


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def unsigned(header: dict[str, Any], body: dict[str, Any], signature: bytes = b"") -> str:
    return f"{b64(json.dumps(header).encode())}.{b64(json.dumps(body).encode())}.{b64(signature)}"


def hs256(secret: bytes, body: dict[str, Any], kid: str = "rsa-1") -> str:
    """An HMAC token keyed with `secret` (the confusion attack: the provider's public key as secret)."""
    head = b64(json.dumps({"alg": "HS256", "kid": kid, "typ": "JWT"}).encode())
    payload = b64(json.dumps(body).encode())
    mac = hmac.new(secret, f"{head}.{payload}".encode(), hashlib.sha256).digest()
    return f"{head}.{payload}.{b64(mac)}"


def provider(fake: LoopbackProvider, *, min_interval_s: float = 30.0) -> Provider:
    return Provider(ProviderSettings(fake.issuer, CLIENT), min_interval_s=min_interval_s)


def verify(fake: LoopbackProvider, token: str, nonce: str = NONCE, **options: Any) -> Any:
    async def run() -> Any:
        checking = provider(fake, **options)
        try:
            return await checking.verify(token, nonce)
        finally:
            await checking.close()

    return asyncio.run(run())


def refusal(fake: LoopbackProvider, token: str, nonce: str = NONCE) -> str:
    with pytest.raises(Unauthenticated) as info:
        verify(fake, token, nonce)
    assert info.value.code == "bad_id_token", info.value
    return info.value.message


def test_a_genuine_token_of_the_provider_passes(fake: LoopbackProvider, keys: Keys) -> None:
    verified = verify(fake, signed(keys.rsa, claims(fake)))
    assert (verified.issuer, verified.subject, verified.display_name) == (fake.issuer, "user-1", "Test User")
    ec = verify(fake, signed(keys.ec, claims(fake, aud=CLIENT), kid="ec-1", alg="ES256"))
    assert ec.subject == "user-1" and ec.alg == "ES256"


@pytest.mark.parametrize(
    ("changes", "nonce", "why"),
    [
        ({}, "another-nonce", "nonce"),
        ({"nonce": None}, NONCE, "lacks"),
        ({"aud": ["someone-else"]}, NONCE, "'aud'"),
        ({"aud": [CLIENT, "someone-else"]}, NONCE, "azp"),  # more audiences and no authorized party
        ({"aud": [CLIENT, "other"], "azp": "other"}, NONCE, "azp"),
        ({"exp": int(time.time()) - 3600}, NONCE, "expired"),
        ({"iat": int(time.time()) + 3600}, NONCE, "'iat'"),
        ({"iss": "https://another.example/"}, NONCE, "'iss'"),
        ({"sub": None}, NONCE, "lacks"),
        ({"sub": "x" * 256}, NONCE, "subject"),
    ],
)
def test_claims_that_are_not_this_sign_in_s_are_refused(
    fake: LoopbackProvider, keys: Keys, changes: dict[str, Any], nonce: str, why: str
) -> None:
    assert why in refusal(fake, signed(keys.rsa, claims(fake, **changes)), nonce)


def test_no_nonce_to_compare_with_is_refused_even_for_a_token_without_one(
    fake: LoopbackProvider, keys: Keys
) -> None:
    assert "no nonce" in refusal(fake, signed(keys.rsa, claims(fake, nonce=None)), nonce="")


def test_alg_none_and_hmac_with_the_public_key_are_refused(fake: LoopbackProvider, keys: Keys) -> None:
    body = claims(fake)
    assert "alg 'none'" in refusal(fake, unsigned({"alg": "none", "kid": "rsa-1"}, body))
    assert "alg 'none'" in refusal(fake, unsigned({"alg": "none"}, body))
    assert "alg 'None'" in refusal(fake, unsigned({"alg": "None"}, body, b"x"))
    public_pem = keys.rsa.as_pem(private=False)
    public_jwk = json.dumps(keys.rsa.as_dict(private=False)).encode()
    for secret in (public_pem, public_jwk, b""):
        assert "alg 'HS256'" in refusal(fake, hs256(secret, body))
    fake.algs.append("HS256")  # even a provider that lists an HMAC algorithm: never for ID tokens
    try:
        assert "alg 'HS256'" in refusal(fake, hs256(public_pem, body))
    finally:
        fake.algs.remove("HS256")


def test_a_key_the_provider_never_published_is_refused(fake: LoopbackProvider, keys: Keys) -> None:
    assert "signature" in refusal(fake, signed(keys.other, claims(fake)))  # its kid, another key
    assert "no RS256 key" in refusal(fake, signed(keys.other, claims(fake), kid="attacker"))
    assert "no ES256 key" in refusal(fake, signed(keys.ec, claims(fake), kid="rsa-1", alg="ES256"))
    # An algorithm the provider does not list is refused; one it lists, with a key published for
    # another (the key's own `alg`), too.
    assert "not one of ES256, RS256" in refusal(fake, signed(keys.rsa, claims(fake), alg="PS256"))
    fake.algs.append("PS256")
    try:
        assert "no PS256 key" in refusal(fake, signed(keys.rsa, claims(fake), alg="PS256"))
    finally:
        fake.algs.remove("PS256")


def test_a_token_that_is_no_jwt_is_refused_before_any_fetch(fake: LoopbackProvider) -> None:
    before = dict(fake.hits)
    for junk in ("", "a.b", "not-a-token", "e30.e30.e30.e30.e30", "\u202e.x.y"):
        assert "not a signed JWT" in refusal(fake, junk)
    assert fake.hits == before


def test_unknown_keys_fetch_the_set_again_at_most_once_an_interval(
    fake: LoopbackProvider, keys: Keys
) -> None:
    rotated = RSAKey.generate_key(2048)

    async def run() -> None:
        checking = provider(fake, min_interval_s=0.5)
        try:
            await checking.verify(signed(keys.rsa, claims(fake)), NONCE)
            fetched = fake.hits.get("/keys", 0)
            forged = [signed(keys.other, claims(fake), kid=f"k{i}") for i in range(20)]
            for token in forged:  # a burst of unknown kids: one fetch, not twenty
                with pytest.raises(Unauthenticated):
                    await checking.verify(token, NONCE)
            assert fake.hits["/keys"] - fetched <= 1
            # The provider rotates: its new key is fetched on the first token it signs (once the
            # interval since the last fetch is over).
            fake.keys = [*keys.published(), {**rotated.as_dict(private=False), "kid": "rsa-2", "use": "sig"}]
            await asyncio.sleep(0.6)
            verified = await checking.verify(signed(rotated, claims(fake), kid="rsa-2"), NONCE)
            assert verified.subject == "user-1"
        finally:
            fake.keys = keys.published()
            await checking.close()

    asyncio.run(run())


def test_a_provider_whose_discovery_names_another_issuer_is_not_used(
    fake: LoopbackProvider, keys: Keys
) -> None:
    fake.issuer_override = "https://impostor.example/"
    try:
        with pytest.raises(Unavailable) as info:
            verify(fake, signed(keys.rsa, claims(fake)))
        assert info.value.code == "provider_unavailable" and "impostor" in info.value.message
    finally:
        fake.issuer_override = ""


def test_the_display_name_is_printable_bounded_text_from_the_token_or_userinfo(
    fake: LoopbackProvider, keys: Keys
) -> None:
    assert display_name_of({"name": "\u202eevil\u200b name\x1b[31m" + "x" * 100}) == (
        "evil name[31m" + "x" * 51
    )
    assert display_name_of({"name": "\u202e", "preferred_username": "ann@example"}) == "ann@example"
    assert display_name_of({"name": 42}) == ""
    access = "an-access-token"
    token = signed(keys.rsa, claims(fake, name=None, at_hash=access_token_hash(access, "RS256")))
    fake.userinfo = {"sub": "user-1", "name": "From <userinfo>"}

    async def run() -> tuple[str, str, str]:
        checking = provider(fake)
        try:
            verified = await checking.verify(token, NONCE)
            assert verified.display_name == ""
            right = await checking.profile_name(verified, access)
            wrong = await checking.profile_name(verified, "another-token")  # not the at_hash's
            fake.userinfo = {"sub": "someone-else", "name": "Mallory"}
            other = await checking.profile_name(verified, access)
            return right, wrong, other
        finally:
            await checking.close()

    assert asyncio.run(run()) == ("From <userinfo>", "", "")
    assert fake.bearer[-1] == f"Bearer {access}"


def test_provider_names_are_deterministic_and_nobody_signs_up_with_one() -> None:
    one = provider_name("https://idp.example/", "user-1")
    assert one == provider_name("https://idp.example/", "user-1") and len(one) == 18
    assert one != provider_name("https://idp.example/", "user-2")
    assert one != provider_name("https://other.example/", "user-1")
    assert names.normalized(one) == one
    assert names.reserved(one) and names.reserved(one.upper()) and names.reserved("\u0440-anything")


def test_issuers_are_https_but_on_loopback() -> None:
    assert check_issuer("https://idp.example/realms/x", "V") and check_issuer("http://localhost:9998/", "V")
    for bad in ("http://idp.example/", "ftp://idp.example/", "https://idp.example/?x=1", "https:///", "x"):
        with pytest.raises(ConfigError):
            check_issuer(bad, "V")


# --- through identity's gRPC API --------------------------------------------------------------------


@pytest.fixture(scope="module")
def identity(fake: LoopbackProvider, keys: Keys) -> Iterator[IdentityProcess]:
    env = {"IDENTITY_OIDC_ISSUER": fake.issuer, "IDENTITY_OIDC_CLIENT_ID": CLIENT}
    with running_identity(env) as service:
        yield service


def call(identity: IdentityProcess, token: str | Callable[[], str], id_token: str) -> Any:
    request = pb.SignInWithProviderRequest(id_token=id_token, nonce=NONCE, device="test")
    return identity.client.call("SignInWithProvider", request, token)


def refused(what: Callable[[], object]) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as info:
        what()
    error: Any = info.value
    return error.code(), str(error.details()).split(":", 1)[0]


def test_only_the_gateway_signs_in_with_an_id_token(
    identity: IdentityProcess, fake: LoopbackProvider, keys: Keys
) -> None:
    token = signed(keys.rsa, claims(fake, sub=f"s-{uuid.uuid4().hex}"))
    person = identity.player(f"u{uuid.uuid4().hex[:10]}")
    for caller in (person.token, identity.service_token("engine"), identity.service_token("bots")):
        assert refused(lambda c=caller: call(identity, c, token)) == (  # type: ignore[misc]
            grpc.StatusCode.PERMISSION_DENIED,
            "missing_scope",
        )
    assert refused(lambda: call(identity, "", token))[0] == grpc.StatusCode.UNAUTHENTICATED


def test_forged_id_tokens_are_refused_and_create_no_account(
    identity: IdentityProcess, fake: LoopbackProvider, keys: Keys
) -> None:
    web = identity.service_token("web")
    subject = f"s-{uuid.uuid4().hex}"
    body = claims(fake, sub=subject)
    for forged in (
        unsigned({"alg": "none"}, body),
        hs256(keys.rsa.as_pem(private=False), body),
        signed(keys.other, body),
        signed(keys.rsa, claims(fake, sub=subject, aud=["elsewhere"])),
        signed(keys.rsa, claims(fake, sub=subject, exp=int(time.time()) - 120)),
    ):
        assert refused(lambda f=forged: call(identity, web, f)) == (  # type: ignore[misc]
            grpc.StatusCode.UNAUTHENTICATED,
            "bad_id_token",
        )
    ops = identity.operator()
    lookup = pb.GetAccountRequest(name=provider_name(fake.issuer, subject))
    assert refused(lambda: identity.call("GetAccount", lookup, ops.token))[1] == "no_account"
    long = pb.SignInWithProviderRequest(id_token="x" * 8193, nonce=NONCE)
    with pytest.raises(grpc.RpcError) as info:
        identity.client.call("SignInWithProvider", long, web)
    assert "too_long" in str(info.value)


def test_a_genuine_id_token_opens_the_same_account_each_time_unless_suspended(
    identity: IdentityProcess, fake: LoopbackProvider, keys: Keys
) -> None:
    """The control of the forgeries above, through the whole service (the real provider's sign-in is
    the browser test): first sign-in creates, the next signs in, suspension refuses."""
    web = identity.service_token("web")
    subject = f"s-{uuid.uuid4().hex}"
    first = call(identity, web, signed(keys.rsa, claims(fake, sub=subject, name="Ann \u202eK"))).session
    again = call(identity, web, signed(keys.rsa, claims(fake, sub=subject, name="Renamed"))).session
    account = first.account
    assert again.account.account_id == account.account_id and again.account.sessions == 2
    assert account.name == provider_name(fake.issuer, subject) and account.display_name == "Ann K"
    assert account.kind == pb.ACCOUNT_KIND_HUMAN and again.account.display_name == "Ann K"
    assert identity.client.refresh(again.refresh_token).token
    ops = identity.operator()
    suspend = pb.SetAccountStatusRequest(name=account.name, status=pb.ACCOUNT_STATUS_SUSPENDED, reason="t")
    identity.call("SetAccountStatus", suspend, ops.token)
    token = signed(keys.rsa, claims(fake, sub=subject))
    assert refused(lambda: call(identity, web, token)) == (grpc.StatusCode.PERMISSION_DENIED, "suspended")
    # Nobody signs up under a provider's account name, in any case.
    sign_up = refused(lambda: identity.client.sign_up(account.name.upper(), PASSWORD))
    assert sign_up == (grpc.StatusCode.INVALID_ARGUMENT, "name_reserved")
