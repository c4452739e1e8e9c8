"""The verifier of access tokens: identity's genuine tokens pass, and every way a token is forged or
out of date is refused, each with its reason.

The claims checks need tokens signed with a trusted key but wrong in one claim, which only identity
could make: here the verifier trusts a key the test holds (`signed`), playing identity's part. That
identity's own tokens pass the same verifier is checked against a real identity service.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from joserfc import jwt
from joserfc.jwk import OctKey, OKPKey
from rummy.identity.v1 import identity_pb2 as pb
from rummy_client.identity import Grant, RenewingToken
from rummy_identity.testing import IdentityProcess
from rummy_service.auth import (
    ALGORITHM,
    AUDIENCE,
    EXPIRED,
    ISSUER,
    REGISTRY,
    TOKEN_TYPE,
    AuthError,
    Jwks,
    Principal,
    TokenVerifier,
    authenticate,
    bearer,
    require,
)
from rummy_service.config import ConfigError, env_int
from rummy_service.errors import PermissionDenied, Unauthenticated

KEY = OKPKey.generate_key("Ed25519", parameters={"kid": "test-key"})
HEADER = {"alg": ALGORITHM, "kid": "test-key", "typ": TOKEN_TYPE}
NOW = 1_800_000_000


def claims(**changed: Any) -> dict[str, Any]:
    base = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": "u1",
        "iat": NOW,
        "exp": NOW + 600,
        "scope": "play watch",
        "kind": "human",
        "name": "Ann",
    }
    return {k: v for k, v in {**base, **changed}.items() if v is not None}


def signed(header: dict[str, Any] | None = None, **changed: Any) -> str:
    return jwt.encode(header or HEADER, claims(**changed), KEY, algorithms=[ALGORITHM], registry=REGISTRY)


def verifier(*keys: OKPKey) -> TokenVerifier:
    document = json.dumps({"keys": [k.as_dict(private=False) for k in keys or (KEY,)]})
    return TokenVerifier(Jwks(lambda: (document, 60.0), background=False))


def test_a_token_names_its_account_scopes_kind_and_name() -> None:
    principal, expires = verifier().claims(signed(), NOW)
    assert principal == Principal("u1", frozenset({"play", "watch"}), "human", "Ann") and expires == NOW + 600
    assert principal.plays and principal.rated and not principal.is_operator
    operator = verifier().verify(signed(scope="operate watch", kind="operator"), NOW)
    assert operator.is_operator and not operator.plays and not operator.rated
    bot = verifier().verify(signed(scope="bot:play watch", kind="bot"), NOW)
    assert bot.plays and not bot.rated and bot.is_player_named(["u1"])


def _b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


FORGERIES: dict[str, Callable[[], str]] = {
    "alg none": lambda: f"{_b64({**HEADER, 'alg': 'none'})}.{_b64(claims())}.",
    "HS256 with the public key as its secret": lambda: jwt.encode(
        {**HEADER, "alg": "HS256"},
        claims(),
        OctKey.import_key(json.dumps(KEY.as_dict(private=False))),
        algorithms=["HS256"],
    ),
    "a key the set lacks": lambda: jwt.encode(
        {**HEADER, "kid": "other"},
        claims(),
        OKPKey.generate_key("Ed25519", parameters={"kid": "other"}),
        algorithms=[ALGORITHM],
        registry=REGISTRY,
    ),
    "the set's kid on another key": lambda: jwt.encode(
        HEADER, claims(), OKPKey.generate_key("Ed25519"), algorithms=[ALGORITHM], registry=REGISTRY
    ),
    "claims changed after signing": lambda: ".".join(
        [signed().split(".")[0], _b64(claims(sub="u2", scope="operate")), signed().split(".")[2]]
    ),
    "another issuer's": lambda: signed(iss="someone-else"),
    "meant for another audience": lambda: signed(aud="another-platform"),
    "an ID token, not an access token": lambda: signed({**HEADER, "typ": "JWT"}),
    "no subject": lambda: signed(sub=""),
    "an unknown kind": lambda: signed(kind="superuser"),
    "no scope claim": lambda: signed(scope=None),
    "no key id": lambda: signed({"alg": ALGORITHM, "typ": TOKEN_TYPE}),
    "too long": lambda: "a" * 5000,
    "not a token": lambda: "not.a.token",
    "empty": lambda: "",
}


@pytest.mark.parametrize("forgery", list(FORGERIES))
def test_forged_or_malformed_tokens_are_refused(forgery: str) -> None:
    with pytest.raises(AuthError) as refused:
        verifier().verify(FORGERIES[forgery](), NOW)
    assert refused.value.code == "unauthenticated"
    assert len(str(refused.value)) < 200


def test_an_expired_token_is_refused_saying_to_renew_it() -> None:
    token = signed()
    tokens = verifier()
    assert tokens.verify(token, NOW + 599).subject == "u1"
    with pytest.raises(AuthError, match="expired 5 min ago: refresh it") as refused:
        tokens.verify(token, NOW + 900)  # the cached verification still checks the expiry
    assert refused.value.code == EXPIRED
    with pytest.raises(Unauthenticated) as at_a_service:
        authenticate(tokens, (("authorization", f"Bearer {signed(exp=int(time.time()) - 1)}"),))
    assert at_a_service.value.code == EXPIRED


def test_a_call_needs_one_of_the_scopes_it_names() -> None:
    player = verifier().verify(signed(), NOW)
    require(player, "play", "bot:play")
    with pytest.raises(PermissionDenied) as denied:
        require(player, "operate")
    assert denied.value.code == "missing_scope"


def test_keys_are_fetched_again_for_a_key_the_set_lacks_but_not_more_often_than_asked() -> None:
    second = OKPKey.generate_key("Ed25519", parameters={"kid": "second"})
    published = [KEY]
    fetched: list[float] = []
    clock = [0.0]

    def fetch() -> tuple[str, float]:
        fetched.append(clock[0])
        return json.dumps({"keys": [k.as_dict(private=False) for k in published]}), 3600.0

    tokens = TokenVerifier(Jwks(fetch, background=False, min_interval_s=10.0, clock=lambda: clock[0]))
    assert tokens.verify(signed(), NOW).subject == "u1" and fetched == [0.0]
    rotated = jwt.encode(
        {**HEADER, "kid": "second"}, claims(), second, algorithms=[ALGORITHM], registry=REGISTRY
    )
    published.append(second)
    clock[0] = 5.0
    with pytest.raises(AuthError, match="no key 'second'"):
        tokens.verify(rotated, NOW)  # asked again too soon: the set is as fetched
    clock[0] = 11.0
    assert tokens.verify(rotated, NOW).subject == "u1" and fetched == [0.0, 11.0]


def test_keys_missed_at_start_are_fetched_once_for_a_crowd_of_first_calls() -> None:
    """Identity too slow for a service's start: the keys are fetched again by the first calls, one
    fetch for all those that arrive while it is under way (the rest wait for its outcome)."""
    document = json.dumps({"keys": [KEY.as_dict(private=False)]})
    answers = [ConnectionError("identity did not give its keys (DEADLINE_EXCEEDED)")]
    calls: list[int] = []

    def fetch() -> tuple[str, float]:
        calls.append(len(calls))
        if answers:
            raise answers.pop()
        time.sleep(0.3)  # identity slow: the other first calls arrive while this is under way
        return document, 3600.0

    jwks = Jwks(fetch, background=False)
    assert not jwks.load_if_missing() and calls == [0]  # the fetch at start failed: no keys, no raise
    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(lambda _: jwks.load_if_missing(), range(8)))
    assert outcomes == [True] * 8 and len(calls) == 2
    assert TokenVerifier(jwks).verify(signed(), NOW).subject == "u1"


def test_identitys_own_tokens_pass_and_renew(identity: IdentityProcess) -> None:
    reply = identity.call("GetJwks", pb.GetJwksRequest(), "")
    tokens = TokenVerifier(Jwks(lambda: (reply.jwks, reply.max_age_s), background=False))
    ann = identity.player("auth-ann")
    principal = tokens.verify(ann.token(), time.time())
    assert principal.subject == ann.id and principal.scopes == {"play", "watch"} and principal.kind == "human"


def test_a_renewing_token_is_renewed_once_half_its_lifetime_has_passed() -> None:
    clock = [1000.0]
    issued = iter(["first", "second", "third"])
    renewing = RenewingToken(lambda: Grant(next(issued), clock[0] + 100), clock=lambda: clock[0])
    assert renewing() == "first"
    clock[0] = 1040.0
    assert renewing() == "first"  # more than half its life ahead
    clock[0] = 1060.0
    renewing()  # past half-life: renewed in the background, the current one answered meanwhile
    deadline = time.monotonic() + 5
    while renewing() != "second" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert renewing() == "second"
    clock[0] = 1000.0 + 60 + 100  # the second expired too (a machine that slept): renewed in line
    assert renewing() == "third"


def test_bearer_reads_the_authorization_metadata() -> None:
    assert bearer((("x-other", "1"), ("authorization", "Bearer abc.def"))) == "abc.def"
    for metadata in ((), (("authorization", "Basic abc"),), None):
        with pytest.raises(AuthError):
            bearer(metadata)


def test_integer_settings_name_the_variable_when_wrong() -> None:
    assert env_int("N", 5, {}) == 5 and env_int("N", 5, {"N": "7"}) == 7
    with pytest.raises(ConfigError, match="N="):
        env_int("N", 5, {"N": "seven"})
    with pytest.raises(ConfigError, match="minimum"):
        env_int("N", 5, {"N": "0"}, minimum=1)
