"""What identity does with accounts: sign-up, sign-in, sessions, tokens, and operators' changes.

Each operation reads and writes the records of one partition (an account and its name share one:
`AccountStore.new_account_id`), under that partition's lock, on the instance that owns it (the
servicer routes there first). Secrets are compared by hash, passwords by argon2id; a refusal of a
credential never says which part was wrong.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from limits import parse_many
from rummy.identity.v1 import identity_pb2 as pb
from rummy.identity.v1 import records_pb2 as rec
from rummy_service import auth
from rummy_service.auth import Principal, service_scope
from rummy_service.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    Unauthenticated,
    Unavailable,
    quote,
)
from rummy_service.limits import DISPLAY_NAME
from rummy_service.rate_limits import Limiter, RateLimited

from rummy_identity import credentials, names, passwords
from rummy_identity.credentials import Secret
from rummy_identity.passwords import Passwords
from rummy_identity.provider import Verified
from rummy_identity.store import KEYRING, AccountStore, account_key, name_key
from rummy_identity.tokens import Issued, TokenMint

DISPLAY_NAME_CHARS: Final = DISPLAY_NAME
DEVICE_CHARS: Final = 64
LABEL_CHARS: Final = 64
REASON_CHARS: Final = 500
SERVICE_SCOPES: Final[Mapping[str, frozenset[str]]] = {
    "engine": frozenset({service_scope("engine")}),
    "matchmaking": frozenset({service_scope("matchmaking")}),
    "web": frozenset({service_scope("web"), service_scope("bots")}),
    "bots": frozenset({service_scope("bots")}),
    "admin": frozenset({service_scope("admin")}),
}
"""The services that may hold a credential, and the scopes each one's tokens carry."""
BOT_SCOPES: Final = frozenset({auth.BOT_PLAY, auth.WATCH})
PERSON_SCOPES: Final = frozenset({auth.PLAY, auth.WATCH})
OPERATOR_SCOPES: Final = frozenset({auth.OPERATE, auth.WATCH})
KINDS: Final[Mapping[int, str]] = {
    pb.ACCOUNT_KIND_HUMAN: auth.HUMAN,
    pb.ACCOUNT_KIND_BOT: auth.BOT,
    pb.ACCOUNT_KIND_GUEST: auth.GUEST,
    pb.ACCOUNT_KIND_OPERATOR: auth.OPERATOR,
}
SCOPES: Final[Mapping[int, frozenset[str]]] = {
    pb.ACCOUNT_KIND_HUMAN: PERSON_SCOPES,
    pb.ACCOUNT_KIND_GUEST: PERSON_SCOPES,
    pb.ACCOUNT_KIND_OPERATOR: OPERATOR_SCOPES,
}
BAD_CREDENTIALS: Final = "bad_credentials"
PROVIDER_PREFIX: Final = names.PROVIDER_PREFIX
FAILED_SIGN_INS: Final = parse_many("20/10 minutes")
"""Failed sign-ins to one account, from anywhere, before the next waits (a guesser slowed down; the
owner waits minutes at most, never locked out for good)."""
FAILED_FROM_ONE_ADDRESS: Final = parse_many("5/10 minutes")
"""Failed sign-ins to one account from one address."""


@dataclass(frozen=True, slots=True)
class Lifetimes:
    """How long things last, in seconds."""

    refresh_s: int = 30 * 24 * 3600
    reset_s: int = 24 * 3600
    name_reserved_s: int = 180 * 24 * 3600
    sessions_kept: int = 20  # per account: the oldest session ends when a 21st starts
    tokens_kept: int = 20  # personal API tokens per account


def display_name(raw: str, fallback: str) -> str:
    """Any printable text up to 64 characters (control characters refused); empty: `fallback`."""
    if len(raw) > DISPLAY_NAME_CHARS:
        raise InvalidArgument(
            "too_long", f"display name has {len(raw)} characters; at most {DISPLAY_NAME_CHARS}"
        )
    text = raw.strip()
    if any(not char.isprintable() for char in text):
        raise InvalidArgument("bad_display_name", "a display name holds printable characters only")
    return text or fallback


def provider_name(issuer: str, subject: str) -> str:
    """The account name of a provider's user: `p-` and 16 base32 characters of SHA-256(issuer, NUL,
    subject), so the same user always has the same account, and its record the partition of that name.
    Nobody signs up with a `p-` name (names.RESERVED_PREFIXES)."""
    digest = hashlib.sha256(f"{issuer}\0{subject}".encode()).digest()
    return PROVIDER_PREFIX + base64.b32encode(digest).decode("ascii")[:16].lower()


def _bounded(value: str, limit: int, field_name: str) -> str:
    if len(value) > limit:
        raise InvalidArgument("too_long", f"{field_name} has {len(value)} characters; at most {limit}")
    return value


@dataclass(slots=True)
class Accounts:
    store: AccountStore
    mint: TokenMint
    passwords: Passwords
    services: Mapping[str, bytes] = field(default_factory=dict)
    """Service name -> SHA-256 of its credential's random part (IDENTITY_SERVICE_CREDENTIALS)."""
    lifetimes: Lifetimes = field(default_factory=Lifetimes)
    clock: Callable[[], float] = time.time
    keyring: rec.Keyring = field(default_factory=rec.Keyring)
    """The keyring as this instance knows it (followed from the log by the service)."""
    limiter: Limiter = field(default_factory=Limiter)
    """Counts failed sign-ins (in Redis when the service has one)."""

    def _now(self) -> int:
        return int(self.clock())

    # --- where each call goes -----------------------------------------------------------------------

    def name_partition(self, raw_name: str) -> int:
        return self.store.partition_of(name_key(names.canonical(names.normalized(raw_name))))

    def account_partition(self, account_id: str) -> int:
        return self.store.partition_of(account_key(account_id))

    def provider_partition(self, verified: Verified) -> int:
        return self.name_partition(provider_name(verified.issuer, verified.subject))

    def secret_partition(self, text: str, *kinds: str) -> int | None:
        """The partition of the account a secret names (None: not a secret of these kinds, or a
        service credential, which any instance checks)."""
        for kind in kinds:
            parsed = credentials.parse(text, kind)
            if parsed is not None and kind != credentials.SERVICE:
                return self.account_partition(parsed.owner)
        return None

    # --- signing in ---------------------------------------------------------------------------------

    async def sign_up(self, raw_name: str, raw_display: str, password: str, device: str) -> pb.Session:
        name = names.normalized(raw_name)
        if names.reserved(name):
            raise InvalidArgument("name_reserved", f"the name {quote(name)} is reserved: choose another")
        display = display_name(raw_display, name)
        passwords.check(password)
        _bounded(device, DEVICE_CHARS, "device")
        hashed = await self.passwords.hash(password)
        record = rec.AccountRecord(
            account=pb.Account(
                name=name,
                display_name=display,
                kind=pb.ACCOUNT_KIND_HUMAN,
                status=pb.ACCOUNT_STATUS_ACTIVE,
                created_at=self._now(),
            ),
            password_hash=hashed,
        )
        return await self._create_session(name, record, device)

    async def guest(self, raw_display: str) -> pb.Session:
        """A guest account under a generated name in a partition this instance owns (no hop)."""
        owned = self.store.owned
        while True:
            name = f"guest-{secrets.token_hex(3)}"
            if self.name_partition(name) in owned:
                break
        record = rec.AccountRecord(
            account=pb.Account(
                name=name,
                display_name=display_name(raw_display, name),
                kind=pb.ACCOUNT_KIND_GUEST,
                status=pb.ACCOUNT_STATUS_ACTIVE,
                created_at=self._now(),
            )
        )
        return await self._create_session(name, record, "guest")

    async def create_bot(self, owner: Principal, raw_name: str, raw_display: str) -> pb.Account:
        if owner.kind != auth.HUMAN:
            raise PermissionDenied("humans_only", "only a person with an account may create bot accounts")
        name = names.normalized(raw_name)
        if names.reserved(name):
            raise InvalidArgument("name_reserved", f"the name {quote(name)} is reserved: choose another")
        record = rec.AccountRecord(
            account=pb.Account(
                name=name,
                display_name=display_name(raw_display, name),
                kind=pb.ACCOUNT_KIND_BOT,
                status=pb.ACCOUNT_STATUS_ACTIVE,
                created_at=self._now(),
                owner_id=owner.subject,
            )
        )
        return await self._create_account(name, record)

    async def create_operator(self, raw_name: str) -> pb.IssueResetLinkResponse:
        """An operator account with no password: its first reset link sets one (never a default)."""
        name = names.normalized(raw_name)
        record = rec.AccountRecord(
            account=pb.Account(
                name=name,
                display_name=name,
                kind=pb.ACCOUNT_KIND_OPERATOR,
                status=pb.ACCOUNT_STATUS_ACTIVE,
                created_at=self._now(),
            )
        )
        await self._create_account(name, record)
        return await self.issue_reset(name)

    async def _create_account(self, name: str, record: rec.AccountRecord) -> pb.Account:
        await self._claim(name, record, device=None)
        return _shown(record)

    async def _create_session(self, name: str, record: rec.AccountRecord, device: str) -> pb.Session:
        now = self._now()
        issued = await self._claim(name, record, device)
        assert issued is not None
        access, refresh = issued
        return self._session(record, access, refresh, now)

    async def _claim(
        self, name: str, record: rec.AccountRecord, device: str | None
    ) -> tuple[Issued, str] | None:
        """Claim `name` and write its account in one write; a session too unless `device` is None."""
        canonical = names.canonical(name)
        partition = self.store.partition_of(name_key(canonical))
        async with self.store.lock(partition):
            await self.store.fresh(partition)
            name_seq, held = self.store.name(canonical)
            now = self._now()
            if held is not None and not (held.reserved_until and held.reserved_until <= now):
                raise AlreadyExists("name_taken", f"the name {quote(name)} is taken: choose another")
            account_id = self.store.new_account_id(partition)
            record.account.account_id = account_id
            issued: tuple[Issued, str] | None = None
            if device is not None:
                issued = self._open_session(record, device, now)
            await self.store.write(
                [
                    (name_key(canonical), name_seq, rec.NameRecord(account_id=account_id)),
                    (account_key(account_id), 0, record),
                ]
            )
        return issued

    async def sign_in(self, raw_name: str, password: str, device: str, address: str = "") -> pb.Session:
        """A session for the right password; failures slow the next tries of that account down
        (per account, and per account and `address`), whoever makes them."""
        _bounded(device, DEVICE_CHARS, "device")
        _bounded(password, passwords.MAX_CHARS, "password")
        canonical = names.canonical(names.normalized(raw_name))
        failures = (
            (("failed", canonical, address), FAILED_FROM_ONE_ADDRESS),
            (("failed", canonical), FAILED_SIGN_INS),
        )
        for key, limit in failures:
            wait = await self.limiter.blocked(limit, *key)
            if wait is not None:
                raise RateLimited(wait, "account's failed sign-ins")
        partition = self.store.partition_of(name_key(canonical))
        await self.store.fresh(partition)
        _, held_name = self.store.name(canonical)
        seq, record = (0, None) if held_name is None else self.store.account(held_name.account_id)
        stored = record.password_hash if record is not None and not record.deleted_at else ""
        if not await self.passwords.verify(stored, password):
            for key, limit in failures:
                await self.limiter.count(limit, *key)
            raise Unauthenticated(BAD_CREDENTIALS, "wrong account name or password")
        assert record is not None
        _may_sign_in(record)
        async with self.store.lock(partition):
            seq, current = self.store.account(record.account.account_id)
            if current is None or current.password_hash != record.password_hash:
                raise Unauthenticated(BAD_CREDENTIALS, "wrong account name or password")
            now = self._now()
            if self.passwords.needs_rehash(current.password_hash):
                current.password_hash = await self.passwords.hash(password)
            access, refresh = self._open_session(current, device, now)
            await self.store.write([(account_key(current.account.account_id), seq, current)])
        return self._session(current, access, refresh, now)

    async def sign_in_with_provider(
        self, verified: Verified, device: str, profile: Callable[[], Awaitable[str]]
    ) -> pb.Session:
        """A session of the account of the provider's user `verified` (an ID token identity checked),
        created at their first sign-in (a person's: no password, named by `provider_name`, its display
        name the token's, else `profile`'s, else its name); refused as a password's sign-in would be
        when the account is suspended, banned or deleted."""
        _bounded(device, DEVICE_CHARS, "device")
        name = provider_name(verified.issuer, verified.subject)
        canonical = names.canonical(name)
        partition = self.store.partition_of(name_key(canonical))
        await self.store.fresh(partition)
        _, held = self.store.name(canonical)
        if held is None or (held.reserved_until and held.reserved_until <= self._now()):
            record = rec.AccountRecord(
                account=pb.Account(
                    name=name,
                    display_name=verified.display_name or await profile() or name,
                    kind=pb.ACCOUNT_KIND_HUMAN,
                    status=pb.ACCOUNT_STATUS_ACTIVE,
                    created_at=self._now(),
                ),
                provider_subject=verified.provider_subject,
            )
            try:
                return await self._create_session(name, record, device)
            except AlreadyExists:
                pass  # the same user's first sign-in elsewhere made it meanwhile: sign in to it
        async with self.store.lock(partition):
            await self.store.fresh(partition)
            _, held = self.store.name(canonical)
            seq, current = (0, None) if held is None else self.store.account(held.account_id)
            if current is None:
                raise Unavailable("store_unavailable", "the account is being written: retry")
            _may_sign_in(current)
            if current.provider_subject != verified.provider_subject:
                raise Unauthenticated(
                    BAD_CREDENTIALS, "this provider user's account name is held by another account"
                )
            now = self._now()
            access, refresh = self._open_session(current, device, now)
            await self.store.write([(account_key(current.account.account_id), seq, current)])
        return self._session(current, access, refresh, now)

    def _open_session(self, record: rec.AccountRecord, device: str, now: int) -> tuple[Issued, str]:
        """A new session on `record` (the oldest dropped past the cap) and its first access token."""
        account_id = record.account.account_id
        refresh, parsed = credentials.make(credentials.REFRESH, account_id, credentials.new_id())
        record.sessions.append(
            rec.SessionRecord(
                session_id=parsed.item,
                secret_hash=parsed.hash(),
                created_at=now,
                expires_at=now + self.lifetimes.refresh_s,
                device=device,
            )
        )
        del record.sessions[: max(0, len(record.sessions) - self.lifetimes.sessions_kept)]
        return self._access(record, now, session=parsed.item), refresh

    def _access(
        self, record: rec.AccountRecord, now: int, *, session: str = "", scopes: Iterable[str] = ()
    ) -> Issued:
        account = record.account
        principal = Principal(
            account.account_id,
            frozenset(scopes) or SCOPES[account.kind],
            KINDS[account.kind],
            account.display_name,
        )
        return self.mint.issue(self.keyring, principal, now, session=session)

    def _session(self, record: rec.AccountRecord, access: Issued, refresh: str, now: int) -> pb.Session:
        return pb.Session(
            access_token=access.token,
            access_expires_at=access.expires_at,
            refresh_token=refresh,
            refresh_expires_at=now + self.lifetimes.refresh_s,
            account=_shown(record),
        )

    # --- renewing -----------------------------------------------------------------------------------

    async def refresh(self, token: str) -> pb.RefreshResponse:
        _, _, record, session = await self._session_of(token)
        now = self._now()
        access = self._access(record, now, session=session.session_id)
        return pb.RefreshResponse(
            access_token=access.token, access_expires_at=access.expires_at, account=_shown(record)
        )

    async def _session_of(self, token: str) -> tuple[Secret, int, rec.AccountRecord, rec.SessionRecord]:
        secret = credentials.parse(token, credentials.REFRESH)
        if secret is None:
            raise Unauthenticated("token_revoked", "not a refresh token of this platform: sign in again")
        partition = self.account_partition(secret.owner)
        await self.store.fresh(partition)
        seq, record = self.store.account(secret.owner)
        now = self._now()
        session = next(
            (
                s
                for s in (record.sessions if record is not None else ())
                if s.session_id == secret.item and credentials.matches(secret.random, s.secret_hash)
            ),
            None,
        )
        if record is None or session is None:
            raise Unauthenticated("token_revoked", "this session has ended: sign in again")
        if session.expires_at <= now:
            raise Unauthenticated(auth.EXPIRED, "this session has expired: sign in again")
        _may_sign_in(record)
        return secret, seq, record, session

    async def exchange(self, token: str) -> pb.ExchangeApiTokenResponse:
        now = self._now()
        service = credentials.parse(token, credentials.SERVICE)
        if service is not None:
            stored = self.services.get(service.owner)
            if stored is None or not credentials.matches(service.random, stored):
                raise Unauthenticated("token_revoked", "unknown service credential")
            principal = Principal(
                f"service-{service.owner}", SERVICE_SCOPES[service.owner], auth.SERVICE, service.owner
            )
            issued = self.mint.issue(self.keyring, principal, now)
            account = pb.Account(
                account_id=principal.subject,
                name=principal.subject,
                display_name=service.owner,
                kind=pb.ACCOUNT_KIND_SERVICE,
                status=pb.ACCOUNT_STATUS_ACTIVE,
            )
            return pb.ExchangeApiTokenResponse(
                access_token=issued.token, access_expires_at=issued.expires_at, account=account
            )
        personal = credentials.parse(token, credentials.PERSONAL)
        if personal is None:
            raise Unauthenticated("token_revoked", "not an API token of this platform")
        await self.store.fresh(self.account_partition(personal.owner))
        _, record = self.store.account(personal.owner)
        held = next(
            (
                t
                for t in (record.api_tokens if record is not None else ())
                if t.token.token_id == personal.item and credentials.matches(personal.random, t.secret_hash)
            ),
            None,
        )
        if record is None or held is None:
            raise Unauthenticated("token_revoked", "this API token was revoked or never existed")
        _may_sign_in(record)
        issued = self._access(record, now, session=personal.item, scopes=held.token.scopes)
        return pb.ExchangeApiTokenResponse(
            access_token=issued.token, access_expires_at=issued.expires_at, account=_shown(record)
        )

    # --- ending sessions ----------------------------------------------------------------------------

    async def sign_out(self, token: str) -> int:
        try:
            secret, _, _, session = await self._session_of(token)
        except (Unauthenticated, PermissionDenied):
            return 0  # already ended, or never a session: nothing to end
        return await self._change(
            secret.owner, lambda r: _ended(r, lambda s: s.session_id == session.session_id)
        )

    async def sign_out_everywhere(self, caller: Principal) -> int:
        return await self._change(caller.subject, lambda r: _ended(r, lambda s: True))

    async def _change(self, account_id: str, change: Callable[[rec.AccountRecord], int]) -> int:
        """Apply `change` to the account's record and write it (when it changed anything)."""
        partition = self.account_partition(account_id)
        async with self.store.lock(partition):
            await self.store.fresh(partition)
            seq, record = self.store.account(account_id)
            if record is None or record.deleted_at:
                raise NotFound("no_account", "no such account")
            changed = change(record)
            if changed:
                await self.store.write([(account_key(account_id), seq, record)])
        return changed

    # --- passwords ------------------------------------------------------------------------------------

    async def change_password(self, caller: Principal, current: str, new: str) -> pb.Session:
        _bounded(current, passwords.MAX_CHARS, "current_password")
        passwords.check(new)
        partition = self.account_partition(caller.subject)
        await self.store.fresh(partition)
        _, record = self.store.account(caller.subject)
        if record is None or not await self.passwords.verify(record.password_hash, current):
            raise Unauthenticated(BAD_CREDENTIALS, "the current password is wrong")
        hashed = await self.passwords.hash(new)
        async with self.store.lock(partition):
            seq, record = self.store.account(caller.subject)
            assert record is not None
            record.password_hash = hashed
            del record.sessions[:]
            now = self._now()
            access, refresh = self._open_session(record, "password change", now)
            await self.store.write([(account_key(caller.subject), seq, record)])
        return self._session(record, access, refresh, now)

    async def issue_reset(self, raw_name: str) -> pb.IssueResetLinkResponse:
        canonical = names.canonical(names.normalized(raw_name))
        partition = self.store.partition_of(name_key(canonical))
        async with self.store.lock(partition):
            await self.store.fresh(partition)
            _, held = self.store.name(canonical)
            seq, record = (0, None) if held is None else self.store.account(held.account_id)
            if record is None or record.deleted_at:
                raise NotFound("no_account", f"no account named {quote(raw_name)}")
            if record.account.kind not in (pb.ACCOUNT_KIND_HUMAN, pb.ACCOUNT_KIND_OPERATOR):
                raise FailedPrecondition("no_password", "only people's accounts have passwords")
            token, secret = credentials.make(credentials.RESET, record.account.account_id)
            now = self._now()
            record.reset_hash = secret.hash()
            record.reset_expires_at = now + self.lifetimes.reset_s
            await self.store.write([(account_key(record.account.account_id), seq, record)])
        return pb.IssueResetLinkResponse(
            reset_token=token, expires_at=record.reset_expires_at, account=_shown(record)
        )

    async def reset_password(self, token: str, new: str) -> str:
        secret = credentials.parse(token, credentials.RESET)
        passwords.check(new)
        if secret is None:
            raise Unauthenticated("token_revoked", "not a reset link of this platform")
        hashed = await self.passwords.hash(new)
        partition = self.account_partition(secret.owner)
        async with self.store.lock(partition):
            await self.store.fresh(partition)
            seq, record = self.store.account(secret.owner)
            now = self._now()
            if (
                record is None
                or not record.reset_hash
                or not credentials.matches(secret.random, record.reset_hash)
                or record.reset_expires_at <= now
            ):
                raise Unauthenticated("token_revoked", "this reset link was used, replaced or has expired")
            record.password_hash = hashed
            record.ClearField("reset_hash")
            record.reset_expires_at = 0
            del record.sessions[:]
            await self.store.write([(account_key(secret.owner), seq, record)])
        return record.account.name

    # --- the account itself ---------------------------------------------------------------------------

    async def delete(self, caller: Principal, password: str) -> int:
        """The record keeps only its id and when it was deleted; the name stays reserved."""
        _bounded(password, passwords.MAX_CHARS, "password")
        partition = self.account_partition(caller.subject)
        await self.store.fresh(partition)
        _, record = self.store.account(caller.subject)
        if record is None or record.deleted_at:
            raise NotFound("no_account", "no such account")
        if record.password_hash and not await self.passwords.verify(record.password_hash, password):
            raise Unauthenticated(BAD_CREDENTIALS, "the password is wrong")
        canonical = names.canonical(record.account.name)
        async with self.store.lock(partition):
            seq, record = self.store.account(caller.subject)
            name_seq, _ = self.store.name(canonical)
            now = self._now()
            until = now + self.lifetimes.name_reserved_s
            assert record is not None
            gone = rec.AccountRecord(
                account=pb.Account(
                    account_id=caller.subject, kind=record.account.kind, created_at=record.account.created_at
                ),
                deleted_at=now,
            )
            await self.store.write(
                [
                    (account_key(caller.subject), seq, gone),
                    (
                        name_key(canonical),
                        name_seq,
                        rec.NameRecord(account_id=caller.subject, reserved_until=until),
                    ),
                ]
            )
        return until

    def get(self, account_id: str) -> pb.Account:
        _, record = self.store.account(account_id)
        if record is None or record.deleted_at:
            raise NotFound("no_account", "no such account")
        return _shown(record)

    def get_by_name(self, raw_name: str) -> pb.Account:
        _, held = self.store.name(names.canonical(names.normalized(raw_name)))
        if held is None:
            raise NotFound("no_account", f"no account named {quote(raw_name)}")
        return self.get(held.account_id)

    def lookup(self, *, name: str = "", account_id: str = "") -> pb.Account:
        """Another account's public face, for challenging it: an active account's id, name, display
        name and kind, nothing else. One answer, NOT_FOUND `no_account`, for a name never used, an id
        never issued, a deleted, suspended or banned account: sign-up tells whether a name is taken, and
        this tells no more than that about an account that may not play."""
        if name:
            _, held = self.store.name(names.canonical(names.normalized(name)))
            account_id = "" if held is None else held.account_id
        _, record = self.store.account(account_id) if account_id else (0, None)
        if record is None or record.deleted_at or record.account.status != pb.ACCOUNT_STATUS_ACTIVE:
            raise NotFound("no_account", "no such account")
        shown = record.account
        return pb.Account(
            account_id=shown.account_id, name=shown.name, display_name=shown.display_name, kind=shown.kind
        )

    async def set_display_name(self, caller: Principal, raw: str) -> pb.Account:
        def rename(record: rec.AccountRecord) -> int:
            record.account.display_name = display_name(raw, record.account.name)
            return 1

        await self._change(caller.subject, rename)
        return self.get(caller.subject)

    async def set_status(self, raw_name: str, status: int, reason: str) -> pb.Account:
        if status not in (pb.ACCOUNT_STATUS_ACTIVE, pb.ACCOUNT_STATUS_SUSPENDED, pb.ACCOUNT_STATUS_BANNED):
            raise InvalidArgument("bad_status", "status is ACTIVE, SUSPENDED or BANNED")
        _bounded(reason, REASON_CHARS, "reason")
        account = self.get_by_name(raw_name)

        def restate(record: rec.AccountRecord) -> int:
            record.account.status = status  # type: ignore[assignment]
            record.status_reason = reason
            if status != pb.ACCOUNT_STATUS_ACTIVE:
                del record.sessions[:]
            return 1

        await self._change(account.account_id, restate)
        return self.get(account.account_id)

    # --- personal API tokens --------------------------------------------------------------------------

    def _token_holder(self, caller: Principal, account_id: str) -> tuple[str, frozenset[str]]:
        """Whose tokens the caller manages (itself, or a bot it owns) and the scopes they may carry."""
        if not account_id or account_id == caller.subject:
            if caller.kind != auth.HUMAN:
                raise PermissionDenied("humans_only", "only people and their bots hold personal API tokens")
            return caller.subject, PERSON_SCOPES
        _, record = self.store.account(account_id)
        if record is None or record.deleted_at or record.account.owner_id != caller.subject:
            raise PermissionDenied("not_your_bot", "that account is not a bot of yours")
        return account_id, BOT_SCOPES

    async def create_api_token(
        self, caller: Principal, account_id: str, scopes: Sequence[str], label: str
    ) -> pb.CreateApiTokenResponse:
        _bounded(label, LABEL_CHARS, "label")
        holder, allowed = self._token_holder(caller, account_id)
        wanted = frozenset(scopes) or allowed
        if not wanted <= allowed:
            raise InvalidArgument("bad_scope", f"these tokens may carry {', '.join(sorted(allowed))} only")
        text, secret = credentials.make(credentials.PERSONAL, holder, credentials.new_id())
        token = pb.ApiToken(token_id=secret.item, label=label, scopes=sorted(wanted), created_at=self._now())

        def add(record: rec.AccountRecord) -> int:
            if len(record.api_tokens) >= self.lifetimes.tokens_kept:
                raise FailedPrecondition(
                    "too_many_tokens", f"at most {self.lifetimes.tokens_kept} tokens: revoke one first"
                )
            record.api_tokens.append(rec.ApiTokenRecord(token=token, secret_hash=secret.hash()))
            return 1

        await self._change(holder, add)
        return pb.CreateApiTokenResponse(api_token=text, token=token)

    def list_api_tokens(self, caller: Principal, account_id: str) -> list[pb.ApiToken]:
        holder, _ = self._token_holder(caller, account_id)
        _, record = self.store.account(holder)
        return [t.token for t in reversed(record.api_tokens)] if record is not None else []

    async def revoke_api_token(self, caller: Principal, account_id: str, token_id: str) -> None:
        holder, _ = self._token_holder(caller, account_id)

        def revoke(record: rec.AccountRecord) -> int:
            kept = [t for t in record.api_tokens if t.token.token_id != token_id]
            if len(kept) == len(record.api_tokens):
                raise NotFound("no_token", f"no token {quote(token_id)}")
            del record.api_tokens[:]
            record.api_tokens.extend(kept)
            return 1

        await self._change(holder, revoke)

    # --- keys -----------------------------------------------------------------------------------------

    def keyring_partition(self) -> int:
        return self.store.partition_of(KEYRING)


def _shown(record: rec.AccountRecord) -> pb.Account:
    account = pb.Account()
    account.CopyFrom(record.account)
    account.sessions = len(record.sessions)
    return account


def _ended(record: rec.AccountRecord, which: Callable[[rec.SessionRecord], bool]) -> int:
    kept = [s for s in record.sessions if not which(s)]
    ended = len(record.sessions) - len(kept)
    del record.sessions[:]
    record.sessions.extend(kept)
    return ended


def _may_sign_in(record: rec.AccountRecord) -> None:
    status = record.account.status
    if record.deleted_at:
        raise Unauthenticated("token_revoked", "this account was deleted")
    if status == pb.ACCOUNT_STATUS_SUSPENDED:
        raise PermissionDenied("suspended", "this account is suspended: ask the platform's operators")
    if status == pb.ACCOUNT_STATUS_BANNED:
        raise PermissionDenied("banned", "this account is banned")
