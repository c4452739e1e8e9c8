"""Identity over gRPC, as a process on its own store: accounts, sessions, tokens, operators, bots."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from rummy.identity.v1 import identity_pb2 as pb
from rummy_client.identity import IdentityClient
from rummy_identity.testing import PASSWORD, IdentityProcess, running_identity
from rummy_service.auth import AuthError, Jwks, TokenVerifier


@pytest.fixture(scope="module")
def service() -> Iterator[IdentityProcess]:
    with running_identity() as identity:
        yield identity


def name() -> str:
    return f"p{uuid.uuid4().hex[:10]}"


ANY = None


def refused(call: object, code: grpc.StatusCode | None) -> str:
    """The reason code of a call that must fail with `code` (`ANY`: with any)."""
    with pytest.raises(grpc.RpcError) as info:
        call()  # type: ignore[operator]
    assert code is ANY or info.value.code() == code, info.value.details()
    details = info.value.details() or ""
    return details.split(":", 1)[0]


def verifier(service: IdentityProcess) -> TokenVerifier:
    def fetch() -> tuple[str, float]:
        reply = service.call("GetJwks", pb.GetJwksRequest(), "")
        return reply.jwks, reply.max_age_s

    return TokenVerifier(Jwks(fetch, background=False))


def test_sign_up_in_and_out_and_a_name_claimed_once_in_any_form(service: IdentityProcess) -> None:
    client = service.client
    who = name()
    session = client.sign_up(who, PASSWORD, display_name="Ann <b>the best</b>", device="test")
    account = session.account
    assert account.name == who and account.display_name == "Ann <b>the best</b>"
    assert account.kind == pb.ACCOUNT_KIND_HUMAN and account.account_id.startswith("u")
    for form in (who.upper(), who.replace("p", "\u0440", 1)):  # another case; a Cyrillic r
        assert (
            refused(lambda f=form: client.sign_up(f, PASSWORD), grpc.StatusCode.ALREADY_EXISTS)
            == "name_taken"
        )
    again = client.sign_in(who.upper(), PASSWORD)
    assert again.account.account_id == account.account_id and again.account.sessions == 2
    principal = verifier(service).verify(again.access_token, time.time())
    assert principal.subject == account.account_id and principal.scopes == {"play", "watch"}
    assert principal.name == "Ann <b>the best</b>" and principal.kind == "human"
    wrong = refused(lambda: client.sign_in(who, "not the password"), grpc.StatusCode.UNAUTHENTICATED)
    nobody = refused(lambda: client.sign_in(name(), PASSWORD), grpc.StatusCode.UNAUTHENTICATED)
    assert wrong == nobody == "bad_credentials"  # the same answer: no probing for names
    assert client.refresh(again.refresh_token).token
    assert client.sign_out(again.refresh_token) == 1
    assert (
        refused(lambda: client.refresh(again.refresh_token), grpc.StatusCode.UNAUTHENTICATED)
        == "token_revoked"
    )
    assert client.refresh(session.refresh_token).token  # the other session goes on


def test_sign_out_everywhere_and_a_password_change_end_every_session(service: IdentityProcess) -> None:
    client = service.client
    who = name()
    first = client.sign_up(who, PASSWORD)
    second = client.sign_in(who, PASSWORD)
    ended = client.call("SignOutEverywhere", pb.SignOutEverywhereRequest(), second.access_token)
    assert ended.ended == 2
    for session in (first, second):
        assert refused(lambda s=session: client.refresh(s.refresh_token), grpc.StatusCode.UNAUTHENTICATED)
    third = client.sign_in(who, PASSWORD)
    changed = client.call(
        "ChangePassword",
        pb.ChangePasswordRequest(current_password=PASSWORD, new_password="a brand new password"),
        third.access_token,
    )
    assert refused(lambda: client.refresh(third.refresh_token), grpc.StatusCode.UNAUTHENTICATED)
    assert client.refresh(changed.session.refresh_token).token
    assert refused(lambda: client.sign_in(who, PASSWORD), grpc.StatusCode.UNAUTHENTICATED)
    assert client.sign_in(who, "a brand new password").account.name == who


def test_an_operator_resets_suspends_bans_and_reinstates(service: IdentityProcess) -> None:
    client = service.client
    ops = service.operator()
    who = name()
    session = client.sign_up(who, PASSWORD)
    link = client.call("IssueResetLink", pb.IssueResetLinkRequest(name=who), ops.token)
    client.call(
        "ResetPassword", pb.ResetPasswordRequest(reset_token=link.reset_token, new_password="reset password!")
    )
    again = pb.ResetPasswordRequest(reset_token=link.reset_token, new_password="another one here")
    assert (
        refused(lambda: client.call("ResetPassword", again), grpc.StatusCode.UNAUTHENTICATED)
        == "token_revoked"
    )
    assert refused(lambda: client.refresh(session.refresh_token), grpc.StatusCode.UNAUTHENTICATED)
    assert client.sign_in(who, "reset password!")
    for status, code in ((pb.ACCOUNT_STATUS_SUSPENDED, "suspended"), (pb.ACCOUNT_STATUS_BANNED, "banned")):
        set_status = pb.SetAccountStatusRequest(name=who, status=status, reason="testing")
        assert client.call("SetAccountStatus", set_status, ops.token).account.status == status
        denied = refused(lambda: client.sign_in(who, "reset password!"), grpc.StatusCode.PERMISSION_DENIED)
        assert denied == code
    reinstate = pb.SetAccountStatusRequest(name=who, status=pb.ACCOUNT_STATUS_ACTIVE)
    client.call("SetAccountStatus", reinstate, ops.token)
    assert client.sign_in(who, "reset password!")
    # People may not do what operators do, and operators are made only with the admin credential.
    person = client.sign_up(name(), PASSWORD)
    for method, request in (
        ("IssueResetLink", pb.IssueResetLinkRequest(name=who)),
        ("SetAccountStatus", pb.SetAccountStatusRequest(name=who, status=pb.ACCOUNT_STATUS_BANNED)),
        ("CreateOperator", pb.CreateOperatorRequest(name=name())),
    ):
        call = lambda m=method, r=request: client.call(m, r, person.access_token)  # noqa: E731
        assert refused(call, grpc.StatusCode.PERMISSION_DENIED) == "missing_scope"


def test_a_deleted_account_keeps_its_name_reserved(service: IdentityProcess) -> None:
    client = service.client
    who = name()
    session = client.sign_up(who, PASSWORD)
    wrong = pb.DeleteAccountRequest(password="not it at all")
    call = lambda: client.call("DeleteAccount", wrong, session.access_token)  # noqa: E731
    assert refused(call, grpc.StatusCode.UNAUTHENTICATED) == "bad_credentials"
    deleted = client.call("DeleteAccount", pb.DeleteAccountRequest(password=PASSWORD), session.access_token)
    assert deleted.name_reserved_until > time.time() + 100 * 24 * 3600
    assert refused(lambda: client.sign_in(who, PASSWORD), grpc.StatusCode.UNAUTHENTICATED)
    assert refused(lambda: client.sign_up(who, PASSWORD), grpc.StatusCode.ALREADY_EXISTS) == "name_taken"
    assert refused(lambda: client.refresh(session.refresh_token), grpc.StatusCode.UNAUTHENTICATED)


def test_a_bot_signs_in_with_a_personal_token_its_owner_can_revoke(service: IdentityProcess) -> None:
    client = service.client
    owner = service.player(name())
    bot = client.call("CreateBotAccount", pb.CreateBotAccountRequest(name=name()), owner.token).account
    assert bot.kind == pb.ACCOUNT_KIND_BOT and bot.owner_id == owner.id
    issued = client.call(
        "CreateApiToken", pb.CreateApiTokenRequest(account_id=bot.account_id, label="laptop"), owner.token
    )
    principal = verifier(service).verify(client.exchange(issued.api_token).token, time.time())
    assert principal.subject == bot.account_id and principal.kind == "bot"
    assert principal.scopes == {"bot:play", "watch"}  # never a person's `play`
    too_much = pb.CreateApiTokenRequest(account_id=bot.account_id, scopes=["play"])
    call = lambda: client.call("CreateApiToken", too_much, owner.token)  # noqa: E731
    assert refused(call, grpc.StatusCode.INVALID_ARGUMENT) == "bad_scope"
    stranger = service.player(name())
    steal = pb.CreateApiTokenRequest(account_id=bot.account_id)
    call = lambda: client.call("CreateApiToken", steal, stranger.token)  # noqa: E731
    assert refused(call, grpc.StatusCode.PERMISSION_DENIED) == "not_your_bot"
    listed = client.call("ListApiTokens", pb.ListApiTokensRequest(account_id=bot.account_id), owner.token)
    assert [t.label for t in listed.tokens] == ["laptop"] and "api_token" not in str(listed)
    revoke = pb.RevokeApiTokenRequest(account_id=bot.account_id, token_id=issued.token.token_id)
    client.call("RevokeApiToken", revoke, owner.token)
    gone = refused(lambda: client.exchange(issued.api_token), grpc.StatusCode.UNAUTHENTICATED)
    assert gone == "token_revoked"


def test_a_signed_in_account_looks_another_up_and_learns_only_its_public_face(
    service: IdentityProcess,
) -> None:
    client = service.client
    ops = service.operator()
    who = name()
    ann = client.sign_up(who, PASSWORD, display_name="Ann <i>A</i>").account
    asker = service.player(name())

    def lookup(**by: str) -> pb.LookupAccountResponse:
        answer: pb.LookupAccountResponse = client.call(
            "LookupAccount", pb.LookupAccountRequest(**by), asker.token
        )
        return answer

    for by in ({"name": who.upper()}, {"account_id": ann.account_id}):
        found = lookup(**by).account
        assert (found.account_id, found.name, found.display_name) == (ann.account_id, who, "Ann <i>A</i>")
        assert found.kind == pb.ACCOUNT_KIND_HUMAN and not found.created_at and not found.sessions
    suspend = pb.SetAccountStatusRequest(name=who, status=pb.ACCOUNT_STATUS_SUSPENDED)
    client.call("SetAccountStatus", suspend, ops.token)
    for by in ({"name": who}, {"name": name()}, {"account_id": "u" + "0" * 16}):  # one answer for all
        assert refused(lambda b=by: lookup(**b), grpc.StatusCode.NOT_FOUND) == "no_account"
    for by in ({}, {"name": who, "account_id": ann.account_id}):
        assert refused(lambda b=by: lookup(**b), grpc.StatusCode.INVALID_ARGUMENT) == "malformed_request"
    assert refused(lambda: lookup(name="a b"), grpc.StatusCode.INVALID_ARGUMENT) == "bad_name"
    nobody = lambda: client.call("LookupAccount", pb.LookupAccountRequest(name=who))  # noqa: E731
    assert refused(nobody, grpc.StatusCode.UNAUTHENTICATED)
    lister = service.player(name())
    many = pb.LookupAccountRequest(name=name())
    answers: list[str] = []
    for _ in range(61):  # paced under the per-account limit of every call (30 a second)
        answers.append(refused(lambda: client.call("LookupAccount", many, lister.token), ANY))
        time.sleep(0.04)
    assert answers[:60] == ["no_account"] * 60 and answers[60] == "rate_limited"  # LOOKUPS: 60 a minute


def test_guests_and_services_get_their_own_narrow_tokens(service: IdentityProcess) -> None:
    tokens = verifier(service)
    guest = service.client.guest("Visitor")
    principal = tokens.verify(guest.access_token, time.time())
    assert (
        principal.kind == "guest" and principal.name == "Visitor" and guest.account.name.startswith("guest-")
    )
    engine = tokens.verify(service.service_token("engine")(), time.time())
    assert engine.kind == "service" and engine.scopes == {"service:engine"}
    web = tokens.verify(service.service_token("web")(), time.time())
    assert web.scopes == {"service:web", "service:bots"}
    forged = "mss_engine_" + "x" * 43
    assert (
        refused(lambda: service.client.exchange(forged), grpc.StatusCode.UNAUTHENTICATED) == "token_revoked"
    )


def test_every_field_is_bounded_before_any_work(service: IdentityProcess) -> None:
    client = IdentityClient(service.address)
    try:
        for request in (
            pb.SignInRequest(name="a" * 4_000_000, password=PASSWORD),
            pb.SignUpRequest(name=name(), password="p" * 10_000),
            pb.SignUpRequest(name=name(), password=PASSWORD, display_name="d" * 65),
        ):
            method = "SignIn" if isinstance(request, pb.SignInRequest) else "SignUp"
            with pytest.raises(grpc.RpcError) as info:
                client.call(method, request)
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert len(info.value.details() or "") < 200
    finally:
        client.close()


def test_a_token_is_refused_once_it_expires(service: IdentityProcess) -> None:
    session = service.client.sign_up(name(), PASSWORD)
    tokens = verifier(service)
    assert tokens.verify(session.access_token, time.time())
    with pytest.raises(AuthError) as expired:
        tokens.verify(session.access_token, session.access_expires_at)
    assert expired.value.code == "token_expired"


def test_failed_sign_ins_slow_the_next_down_for_that_account_only(service: IdentityProcess) -> None:
    client = service.client
    target, other = name(), name()
    client.sign_up(target, PASSWORD)
    client.sign_up(other, PASSWORD)
    for _ in range(5):
        assert refused(lambda: client.sign_in(target, "a wrong guess!"), grpc.StatusCode.UNAUTHENTICATED)
    with pytest.raises(grpc.RpcError) as slowed:
        client.sign_in(target, PASSWORD)  # even the right password waits: the guesser cannot tell
    error: Any = slowed.value
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and error.details().startswith("rate_limited")
    waits = dict(error.trailing_metadata())
    assert 0 < int(waits["retry-after-ms"]) <= 600_000  # minutes at most, never for good
    assert client.sign_in(other, PASSWORD).account.name == other
