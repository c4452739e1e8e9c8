"""The marker of a forwarded call: made by a peer holding the service's key, for one method and the
`meldstream-*` values it carries, for a short while; anything else does not verify."""

from __future__ import annotations

import time

from rummy_service.forwarding import FORWARDED, MARK_VALID_S, ForwardMarks, forwarding_key

KEY = forwarding_key("0123456789abcdef0123456789abcdef", "rummy.identity.v1.IdentityService")
BOUND = (("meldstream-client-address", "10.0.0.5"),)


def _call(marker: str, *extra: tuple[str, str]) -> list[tuple[str, str]]:
    return [("authorization", "Bearer t"), *BOUND, *extra, (FORWARDED, marker)]


def test_a_peers_marker_verifies_for_its_method_and_values_only() -> None:
    marks = ForwardMarks(KEY)
    marker = marks.mark("SignIn", BOUND)
    assert marks.verified("SignIn", _call(marker))
    assert marks.verified("SignIn", reversed(_call(marker)))  # metadata order is not part of it
    assert not marks.verified("SignUp", _call(marker))  # another method
    changed = [("meldstream-client-address", "203.0.113.9"), (FORWARDED, marker)]
    assert not marks.verified("SignIn", changed)  # another address vouched for
    assert not marks.verified("SignIn", _call(marker, ("meldstream-ticket-id", "t-1")))  # one added
    assert marks.verified("SignIn", _call(marker, ("x-other", "1")))  # others are not vouched for


def test_a_marker_of_another_key_service_or_time_or_none_does_not_verify() -> None:
    marks = ForwardMarks(KEY)
    same_secret_other_service = forwarding_key("0123456789abcdef0123456789abcdef", "rummy.engine.v1")
    for stranger in (
        ForwardMarks(forwarding_key("another secret", "x")),
        ForwardMarks(same_secret_other_service),
    ):
        assert not marks.verified("SignIn", _call(stranger.mark("SignIn", BOUND)))
    stale = marks.mark("SignIn", BOUND, now=time.time() - MARK_VALID_S - 5)
    early = marks.mark("SignIn", BOUND, now=time.time() + MARK_VALID_S + 5)
    assert not marks.verified("SignIn", _call(stale)) and not marks.verified("SignIn", _call(early))
    stamp, _, mac = marks.mark("SignIn", BOUND).partition(".")
    flipped = mac[:-1] + ("1" if mac.endswith("0") else "0")
    for forged in (
        "1",
        "",
        stamp,
        f"{stamp}.",
        f"{stamp}.{flipped}",
        f"+{stamp}.{mac}",
        f"{stamp}.{mac}" * 3,
    ):
        assert not marks.verified("SignIn", _call(forged)), forged
    assert not marks.verified("SignIn", BOUND)  # no marker at all
