"""Account names: the alphabet, the lengths, reserved names, and one name per canonical form."""

from __future__ import annotations

import pytest
from rummy_identity import names
from rummy_service.errors import InvalidArgument


@pytest.mark.parametrize(
    "same",
    [
        ("alice", "ALICE"),
        ("alice", "Alice"),
        ("alice", "\u0430lice"),  # Cyrillic a
        ("alice", "a1ice"),  # one, ell
        ("alice", "aIice"),  # capital i, ell
        ("alice", "\uff41lice"),  # fullwidth a (NFKC)
        ("bob-99", "BOB-99"),
        ("straße", "STRASSE"),
    ],
)
def test_names_that_look_alike_are_one_name(same: tuple[str, str]) -> None:
    first, second = same
    assert names.canonical(names.normalized(first)) == names.canonical(names.normalized(second))


@pytest.mark.parametrize(
    "different",
    [
        ("alice", "alicia"),
        ("bob", "rob"),
        ("ann", "anna"),
        ("kati", "kata"),
        ("p00-x", "p06-x"),
        ("ruby", "yuzu"),
    ],
)
def test_different_names_stay_different(different: tuple[str, str]) -> None:
    first, second = different
    assert names.canonical(first) != names.canonical(second)


def test_names_of_every_script_the_rules_came_in_are_welcome() -> None:
    for name in ("Ágnes", "Þórunn", "Наташа", "Zoë_2", "Ödön-K"):
        assert names.normalized(name) == name


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("ab", "bad_name"),  # too short
        ("a" * 25, "bad_name"),  # too long after normalizing
        ("a" * 65, "too_long"),  # refused before any work
        ("ann smith", "bad_name"),
        ("ann.smith", "bad_name"),
        ("<img src=x>", "bad_name"),
        ("ann\u200bsmith", "bad_name"),  # zero-width space
        ("ann\u202esmith", "bad_name"),  # right-to-left override
        ("-ann", "bad_name"),
        ("_ann", "bad_name"),
    ],
)
def test_a_name_outside_the_rules_is_refused_with_its_reason(raw: str, code: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        names.normalized(raw)
    assert refused.value.code == code
    assert len(str(refused.value)) < 200  # never the whole input


@pytest.mark.parametrize(
    "name", ["operator", "OPERATOR", "0perator", "system", "bot-ada", "guest-1a2b3c", "Admin"]
)
def test_reserved_names_are_reserved_in_every_form(name: str) -> None:
    assert names.reserved(name)


def test_ordinary_names_are_not_reserved() -> None:
    assert not names.reserved("operatorfan")
    assert not names.reserved("alice")
    assert not names.reserved("botanist")
