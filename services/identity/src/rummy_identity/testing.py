"""A real identity service for tests and benchmarks, and the accounts and credentials they use.

Tests get their tokens the way every client does: from an identity service (`python -m rummy_identity`
on a throwaway embedded store), by signing up and signing in, exchanging a service's credential, or
an operator's session opened with a reset link. Nothing here can make a token without it. Passwords
are hashed at argon2's lowest cost and keys are published a few seconds ahead, so a test signs in in
milliseconds and a rotation completes within a test.

The root conftest's `identity` fixture is one of these for the whole test session; a test of identity
itself or a benchmark starts others.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import grpc
from rummy.identity.v1 import identity_pb2 as pb
from rummy_client.identity import IdentityClient, RenewingToken
from rummy_infra.local import free_port
from rummy_infra.serving import stop_process, wait_serving
from rummy_service.config import SERVICE_CREDENTIAL_VARIABLE
from rummy_service.public_keys import IDENTITY_VARIABLE

from rummy_identity import credentials
from rummy_identity.accounts import SERVICE_SCOPES

PASSWORD: Final = "tests-password-1"
FAST_HASHING: Final = {
    "IDENTITY_ARGON2_MEMORY_KIB": "8",
    "IDENTITY_ARGON2_TIME_COST": "1",
    "IDENTITY_ARGON2_PARALLELISM": "1",
}


@dataclass(frozen=True, slots=True)
class Player:
    """A signed-up account: its id (the player id at tables), name, and an access token kept fresh."""

    id: str
    name: str
    token: RenewingToken

    def auth(self) -> tuple[tuple[str, str], ...]:
        """`authorization` metadata for one gRPC call."""
        return (("authorization", f"Bearer {self.token()}"),)


def credentials_setting(issued: Mapping[str, str]) -> str:
    """IDENTITY_SERVICE_CREDENTIALS for `issued`: each service's name and its credential's hash."""
    return ",".join(f"{name}={digest.hex()}" for name, digest in credentials.hashes(issued).items())


class IdentityProcess:
    """`python -m rummy_identity` on `env` (an embedded store in a new directory unless `env` names
    one), with a fresh credential for every service; stopped by `stop`."""

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        log: Path | None = None,
        channel: grpc.ChannelCredentials | None = None,
    ) -> None:
        self.credentials = credentials.service_credentials(SERVICE_SCOPES)
        self._dir = tempfile.mkdtemp(prefix="meldstream-identity-")
        self.address = f"127.0.0.1:{free_port()}"
        self.env = {
            **os.environ,
            "MELDSTREAM_DEV": "1",
            "IDENTITY_ADDRESS": self.address,
            "IDENTITY_DATA_DIR": self._dir,
            "IDENTITY_SERVICE_CREDENTIALS": credentials_setting(self.credentials),
            "IDENTITY_KEY_LEAD_S": "4",
            **FAST_HASHING,
            **(env or {}),
        }
        self._log = log or Path(self._dir) / "identity.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self._channel = channel  # how the tests' client reaches an identity serving TLS
        self.client = IdentityClient(self.address, credentials=channel)
        self._players: dict[str, Player] = {}

    def start(self) -> IdentityProcess:
        """Start the process (again, after `stop`: the same address, store and credentials)."""
        self.client.close()
        self.client = IdentityClient(self.address, credentials=self._channel)
        self._players.clear()
        with self._log.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "rummy_identity"], env=self.env, stdout=out, stderr=out
            )
        try:
            wait_serving(self.address, self.proc, timeout_s=60, credentials=self._channel)
        except RuntimeError as failure:
            raise AssertionError(f"{failure}:\n{self._log.read_text()[-3000:]}") from None
        return self

    def stop(self) -> None:
        self.client.close()
        if self.proc is not None:
            stop_process(self.proc)

    # --- what services and tests are given ------------------------------------------------------------

    def service_env(self, service: str = "") -> dict[str, str]:
        """The environment a service process verifying tokens needs (and its own credential)."""
        env = {IDENTITY_VARIABLE: self.address}
        if service:
            env[SERVICE_CREDENTIAL_VARIABLE] = self.credentials[service]
        return env

    def service_token(self, service: str) -> RenewingToken:
        return self.client.api_token(self.credentials[service])

    def player(self, name: str, *, display_name: str = "") -> Player:
        """The account `name` (signed up on first use, with the tests' password), signed in."""
        known = self._players.get(name)
        if known is not None:
            return known
        try:
            session = self.client.sign_up(name, PASSWORD, display_name=display_name, device="tests")
        except Exception as exc:
            if "name_taken" not in str(exc):
                raise
            session = self.client.sign_in(name, PASSWORD, device="tests")
        player = Player(session.account.account_id, session.account.name, self.client.session_token(session))
        self._players[name] = player
        return player

    def guest(self) -> Player:
        session = self.client.guest()
        return Player(session.account.account_id, session.account.name, self.client.session_token(session))

    def bot(self, owner: Player, name: str) -> Player:
        """A bot account of `owner`, signed in with a personal API token (bot:play, watch)."""
        created = self.client.call("CreateBotAccount", pb.CreateBotAccountRequest(name=name), owner.token)
        bot_id = created.account.account_id
        issued = self.client.call("CreateApiToken", pb.CreateApiTokenRequest(account_id=bot_id), owner.token)
        return Player(bot_id, name, self.client.api_token(issued.api_token))

    def operator(self, name: str = "ops") -> Player:
        """An operator account, made with the admin credential and its first reset link."""
        known = self._players.get(name)
        if known is not None:
            return known
        admin = self.service_token("admin")
        link = self.client.call("CreateOperator", pb.CreateOperatorRequest(name=name), admin).link
        reset = pb.ResetPasswordRequest(reset_token=link.reset_token, new_password=PASSWORD)
        self.client.call("ResetPassword", reset)
        session = self.client.sign_in(name, PASSWORD, device="tests")
        player = Player(session.account.account_id, name, self.client.session_token(session))
        self._players[name] = player
        return player

    def call(self, method: str, request: Any, token: str | RenewingToken) -> Any:
        return self.client.call(method, request, token)


@contextlib.contextmanager
def running_identity(env: Mapping[str, str] | None = None) -> Iterator[IdentityProcess]:
    identity = IdentityProcess(env).start()
    try:
        yield identity
    finally:
        identity.stop()
