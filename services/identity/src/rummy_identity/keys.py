"""Signing keys: made here, kept sealed in the log, published before they sign, dropped after.

The keyring is one record of identity's log (key `keyring`): every key that may have signed a token
still alive, or will sign soon, its private part sealed with AES-256-GCM under a key derived from
IDENTITY_KEY_SECRET (HKDF-SHA256), which only identity holds. So the log holds no usable private key,
every identity instance reads the same keys, and a restart or a new instance signs with them.

Rotation without a failed call: a new key is published `lead_s` before it signs (verifiers refresh
their copy of the set well within that: `max_age_s`), the newest key whose time has come signs, and a
key stays published for an access token's lifetime after its successor took over, since tokens it
signed are still alive until then.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass
from typing import Final

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from joserfc.jwk import OKPKey
from rummy.identity.v1 import records_pb2 as rec

NONCE_BYTES: Final = 12
_INFO: Final = b"meldstream identity signing keys v1"


class KeyringError(Exception):
    """A sealed key does not open with this IDENTITY_KEY_SECRET (another platform's, or changed)."""


@dataclass(frozen=True, slots=True)
class KeyPolicy:
    """When keys are made and how long they are published (seconds)."""

    rotate_s: int = 30 * 24 * 3600  # a key signs this long before the next replaces it
    lead_s: int = 120  # published this long before it signs
    access_ttl_s: int = 600  # the access tokens' lifetime: how long a replaced key still verifies

    @property
    def max_age_s(self) -> int:
        """How long a verifier may keep the set: a key published `lead_s` ahead is fetched in time."""
        return max(1, self.lead_s // 4)


class Sealer:
    """Seals and opens private keys with the key-encryption key derived from the identity secret."""

    def __init__(self, secret: str) -> None:
        kek = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive(secret.encode())
        self._aead = AESGCM(kek)

    def seal(self, private: bytes, kid: str) -> bytes:
        nonce = os.urandom(NONCE_BYTES)
        return nonce + self._aead.encrypt(nonce, private, kid.encode())

    def open(self, sealed: bytes, kid: str) -> bytes:
        try:
            return self._aead.decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], kid.encode())
        except Exception:
            raise KeyringError(
                f"signing key {kid} does not open with this IDENTITY_KEY_SECRET: the keyring was made "
                "with another secret (restore that secret, or start a new identity store)"
            ) from None


def new_key(sealer: Sealer, now: int, signs_from: int) -> rec.SigningKey:
    kid = f"{now:x}-{secrets.token_hex(4)}"
    key = OKPKey.generate_key("Ed25519", parameters={"kid": kid, "use": "sig", "alg": "EdDSA"})
    private = key.as_der(private=True)
    return rec.SigningKey(
        kid=kid,
        public_jwk=json.dumps(key.as_dict(private=False), sort_keys=True),
        sealed_private=sealer.seal(private, kid),
        created_at=now,
        signs_from=signs_from,
    )


def signing(keyring: rec.Keyring, now: int) -> rec.SigningKey | None:
    """The key that signs at `now`: the newest whose time has come."""
    due = [k for k in keyring.keys if k.signs_from <= now]
    return max(due, key=lambda k: (k.signs_from, k.kid)) if due else None


def needs_rotation(keyring: rec.Keyring, now: int, policy: KeyPolicy) -> bool:
    """No key yet, or the newest has signed for `rotate_s` (and none is waiting to take over)."""
    if not keyring.keys:
        return True
    newest = max(k.signs_from for k in keyring.keys)
    return newest <= now and now - newest >= policy.rotate_s


def rotated(keyring: rec.Keyring, sealer: Sealer, now: int, policy: KeyPolicy) -> rec.Keyring:
    """The keyring with a new key (signing at once when there is none yet: nothing can be
    interrupted) and without keys no live token can carry any more."""
    first = not keyring.keys
    added = new_key(sealer, now, now if first else now + policy.lead_s)
    return pruned(rec.Keyring(keys=[*keyring.keys, added]), now, policy)


def pruned(keyring: rec.Keyring, now: int, policy: KeyPolicy) -> rec.Keyring:
    """Keys replaced more than an access token's lifetime (and a lead) ago are dropped."""
    ordered = sorted(keyring.keys, key=lambda k: (k.signs_from, k.kid))
    kept = [
        key
        for key, successor in zip(ordered, [*ordered[1:], None], strict=True)
        if successor is None or now < successor.signs_from + policy.access_ttl_s + policy.lead_s
    ]
    return rec.Keyring(keys=kept)


def jwks(keyring: rec.Keyring) -> str:
    """The public JWK Set of every key in the ring."""
    return json.dumps({"keys": [json.loads(k.public_jwk) for k in keyring.keys]}, sort_keys=True)


def private_key(key: rec.SigningKey, sealer: Sealer) -> OKPKey:
    return OKPKey.import_key(sealer.open(key.sealed_private, key.kid), parameters={"kid": key.kid})
