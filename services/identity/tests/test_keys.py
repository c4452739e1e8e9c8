"""Signing keys: published before they sign, kept while a token they signed may live, sealed."""

from __future__ import annotations

import json

import pytest
from rummy.identity.v1 import records_pb2 as rec
from rummy_identity import keys
from rummy_identity.keys import KeyPolicy, KeyringError, Sealer

POLICY = KeyPolicy(rotate_s=1000, lead_s=100, access_ttl_s=60)
SEALER = Sealer("a key secret of thirty-two bytes or more!")


def test_the_first_key_signs_at_once_and_the_next_after_its_lead() -> None:
    first = keys.rotated(rec.Keyring(), SEALER, 0, POLICY)
    assert keys.signing(first, 0) == first.keys[0]
    assert not keys.needs_rotation(first, 999, POLICY) and keys.needs_rotation(first, 1000, POLICY)
    second = keys.rotated(first, SEALER, 1000, POLICY)
    new = second.keys[-1]
    assert new.signs_from == 1100
    assert keys.signing(second, 1099) == first.keys[0]  # published, not signing yet
    assert keys.signing(second, 1100) == new
    assert {k["kid"] for k in json.loads(keys.jwks(second))["keys"]} == {first.keys[0].kid, new.kid}
    assert not keys.needs_rotation(second, 1050, POLICY)  # one waiting to take over is enough


def test_a_replaced_key_stays_published_while_its_tokens_live() -> None:
    ring = keys.rotated(keys.rotated(rec.Keyring(), SEALER, 0, POLICY), SEALER, 1000, POLICY)
    old = ring.keys[0]
    # The successor signs from 1100; tokens the old key signed live up to 60 s after, plus the lead.
    assert old in keys.pruned(ring, 1100 + 60 + 99, POLICY).keys
    assert old not in keys.pruned(ring, 1100 + 60 + 100, POLICY).keys


def test_the_public_set_holds_no_private_part_and_the_private_one_opens_only_with_its_secret() -> None:
    ring = keys.rotated(rec.Keyring(), SEALER, 0, POLICY)
    (key,) = json.loads(keys.jwks(ring))["keys"]
    assert set(key) == {"kty", "crv", "x", "kid", "use", "alg"} and "d" not in key
    assert keys.private_key(ring.keys[0], SEALER).as_dict(private=True)["d"]
    assert b'"d"' not in ring.keys[0].SerializeToString()
    with pytest.raises(KeyringError, match="another secret"):
        keys.private_key(ring.keys[0], Sealer("another key secret of thirty-two bytes!"))
