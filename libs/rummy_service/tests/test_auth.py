"""Bearer tokens: issue/verify round trip, and every way a token is refused."""

from __future__ import annotations

import pytest
from rummy_service.auth import OPERATOR, PLAYER, SERVICE, AuthError, Principal, TokenIssuer, bearer
from rummy_service.config import ConfigError, env_int

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
    with pytest.raises(AuthError, match="expired"):
        ISSUER.verify(token, now=100)


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
