"""Bearer tokens: issue/verify round trip, and every way a token is refused."""

from __future__ import annotations

import time

import pytest
from rummy_service.auth import (
    EXPIRED,
    OPERATOR,
    PLAYER,
    SERVICE,
    AuthError,
    Principal,
    RenewingToken,
    TokenIssuer,
    authenticate,
    bearer,
)
from rummy_service.config import ConfigError, env_int
from rummy_service.errors import Unauthenticated

ISSUER = TokenIssuer("secret-one")


def test_a_token_names_its_player_and_role() -> None:
    assert ISSUER.verify(ISSUER.issue("ann"), now=0) == Principal("ann", PLAYER)
    operator = ISSUER.verify(ISSUER.issue("ops", OPERATOR), now=0)
    assert operator.is_operator and operator.subject == "ops"
    service = ISSUER.verify(ISSUER.issue("matchmaking", SERVICE), now=0)
    assert service == Principal("matchmaking", SERVICE) and not service.is_operator


def test_only_a_player_token_counts_as_a_player_at_a_table() -> None:
    table = ("ann", "bob")
    assert Principal("ann", PLAYER).is_player_named(table)
    assert not Principal("cy", PLAYER).is_player_named(table)
    assert not Principal("ann", OPERATOR).is_player_named(table)
    assert not Principal("ann", SERVICE).is_player_named(table)


@pytest.mark.parametrize(
    "token",
    [
        "",
        "no-dot",
        ISSUER.issue("ann") + "x",  # signature changed
        ISSUER.issue("ann").replace(ISSUER.issue("ann").split(".")[0], ISSUER.issue("bob").split(".")[0]),
        TokenIssuer("another-secret").issue("ann"),
    ],
)
def test_forged_or_malformed_tokens_are_refused(token: str) -> None:
    with pytest.raises(AuthError):
        ISSUER.verify(token, now=0)


def test_an_expired_token_is_refused() -> None:
    token = ISSUER.issue("ann", expires_at=100)
    assert ISSUER.verify(token, now=99).subject == "ann"
    with pytest.raises(AuthError, match="expired") as refused:
        ISSUER.verify(token, now=100)
    assert refused.value.code == EXPIRED


def test_a_token_lives_the_issuers_lifetime_from_its_issue() -> None:
    before = time.time()
    principal, expires = ISSUER.claims(ISSUER.issue("ann"), before)
    assert principal == Principal("ann", PLAYER)
    assert before + 3600 - 2 <= expires <= time.time() + 3600  # ISSUER's default: an hour
    short = TokenIssuer("secret-one", ttl_s=90)
    assert before + 88 <= short.claims(short.issue("ann"), before)[1] <= time.time() + 90


def test_a_token_minted_with_a_past_expiry_is_refused_at_the_service_saying_to_get_a_new_one() -> None:
    token = ISSUER.issue("ann", expires_at=int(time.time()) - 300)
    with pytest.raises(Unauthenticated) as refused:
        authenticate(ISSUER, (("authorization", f"Bearer {token}"),))
    assert refused.value.code == EXPIRED
    assert "expired 5 min ago: get a new one" in refused.value.message


def test_a_token_without_an_expiry_from_an_older_meldstream_is_refused() -> None:
    never = ISSUER.issue("ann", expires_at=0)  # what issue() wrote before tokens expired
    with pytest.raises(AuthError, match=r"without an expiry.*get a new one") as refused:
        ISSUER.verify(never, now=0)
    assert refused.value.code == EXPIRED


def test_a_renewing_token_is_minted_again_once_half_its_lifetime_has_passed() -> None:
    issuer = TokenIssuer("secret-one", ttl_s=100)
    clock = [1000.0]
    renewing = RenewingToken(issuer, "matchmaking", SERVICE, clock=lambda: clock[0])
    first = renewing()
    clock[0] = 1049.0
    assert renewing() == first  # still more than half its life ahead
    clock[0] = 1050.0
    second = renewing()
    assert second != first
    assert issuer.claims(second, 1149.0) == (Principal("matchmaking", SERVICE), 1150)
    with pytest.raises(AuthError):
        issuer.verify(first, 1100.0)  # the first would have expired by then; the renewed one lives on


def test_bearer_reads_the_authorization_metadata() -> None:
    assert bearer((("x-other", "1"), ("authorization", "Bearer abc.def"))) == "abc.def"
    for metadata in ((), (("authorization", "Basic abc"),), None):
        with pytest.raises(AuthError):
            bearer(metadata)


def test_issuing_needs_a_subject_and_a_known_role() -> None:
    with pytest.raises(ValueError):
        ISSUER.issue("")
    with pytest.raises(ValueError):
        ISSUER.issue("ann", role="admin")


def test_integer_settings_name_the_variable_when_wrong() -> None:
    assert env_int("N", 5, {}) == 5 and env_int("N", 5, {"N": "7"}) == 7
    with pytest.raises(ConfigError, match="N="):
        env_int("N", 5, {"N": "seven"})
    with pytest.raises(ConfigError, match="minimum"):
        env_int("N", 5, {"N": "0"}, minimum=1)
