"""TLS for every gRPC port and every call between services, from four files named in the environment.

- TLS_CERT_FILE and TLS_KEY_FILE: this process's certificate chain and key (PEM). Set, every gRPC port
  it opens serves TLS only; unset, plaintext (on a network nothing else reaches).
- TLS_CLIENT_CA_FILE: callers must present a certificate this CA signed (mutual TLS); the services then
  present their own certificate when they call each other.
- TLS_CA_FILE: the CA this process trusts when it calls a service (the engine forwarding a table,
  matchmaking forwarding to its peers, the web gateway, the `meldstream` command). Set, calls use TLS.
- TLS_SERVER_NAME: the name a called service's certificate must carry, when it is not the host called
  (engines are reached by pod IP, so one name, e.g. meldstream-engine, can serve every engine).

The files are read and checked once at start, so a wrong path or a key that is not the certificate's is
one line naming the variable, not a handshake failure on the first call.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import grpc

from rummy_service.config import ConfigError, env_str

VARIABLES = ("TLS_CERT_FILE", "TLS_KEY_FILE", "TLS_CLIENT_CA_FILE", "TLS_CA_FILE", "TLS_SERVER_NAME")


@dataclass(frozen=True, slots=True)
class Tls:
    """The PEM contents of the configured files (b"" = not configured)."""

    cert: bytes = b""
    key: bytes = b""
    client_ca: bytes = b""
    ca: bytes = b""
    server_name: str = ""
    env: tuple[tuple[str, str], ...] = ()  # the variables as given, for a child process

    @property
    def serves(self) -> bool:
        return bool(self.cert)

    @property
    def calls(self) -> bool:
        return bool(self.ca)

    def server_credentials(self) -> grpc.ServerCredentials | None:
        """What a gRPC port serves with: None for plaintext."""
        if not self.cert:
            return None
        return grpc.ssl_server_credentials(
            [(self.key, self.cert)],
            root_certificates=self.client_ca or None,
            require_client_auth=bool(self.client_ca),
        )

    def channel_credentials(self) -> grpc.ChannelCredentials | None:
        """What a call to another service uses: None for plaintext. With mutual TLS configured, this
        process's own certificate goes along."""
        if not self.ca:
            return None
        if self.client_ca and self.cert:
            return grpc.ssl_channel_credentials(self.ca, self.key, self.cert)
        return grpc.ssl_channel_credentials(self.ca)

    def channel_options(self) -> list[tuple[str, str]]:
        return [("grpc.ssl_target_name_override", self.server_name)] if self.server_name else []

    def channel(self, address: str) -> grpc.aio.Channel:
        """An aio channel to `address`, over TLS when TLS_CA_FILE is set."""
        credentials = self.channel_credentials()
        if credentials is None:
            return grpc.aio.insecure_channel(address)
        return grpc.aio.secure_channel(address, credentials, options=self.channel_options())

    def to_env(self) -> dict[str, str]:
        return dict(self.env)


PLAINTEXT = Tls()


def load_tls(env: Mapping[str, str] | None = None, *, ca_file: str = "") -> Tls:
    """The TLS settings of the environment; `ca_file` (a command-line option) overrides TLS_CA_FILE."""
    names = {name: env_str(name, "", env) for name in VARIABLES}
    if ca_file:
        names["TLS_CA_FILE"] = ca_file
    cert_file, key_file = names["TLS_CERT_FILE"], names["TLS_KEY_FILE"]
    if bool(cert_file) != bool(key_file):
        raise ConfigError(
            "set both TLS_CERT_FILE and TLS_KEY_FILE (this process's certificate and key), or neither"
        )
    if names["TLS_CLIENT_CA_FILE"] and not cert_file:
        raise ConfigError("TLS_CLIENT_CA_FILE (mutual TLS) needs TLS_CERT_FILE and TLS_KEY_FILE as well")
    files = {name: _read(name, path) for name, path in names.items() if name.endswith("_FILE") and path}
    if cert_file:
        try:
            ssl.create_default_context().load_cert_chain(cert_file, key_file)
        except (ssl.SSLError, ValueError) as exc:
            raise ConfigError(
                f"TLS_CERT_FILE={cert_file!r} and TLS_KEY_FILE={key_file!r} are not a certificate and its "
                f"key in PEM ({exc.args[-1] if exc.args else exc})"
            ) from None
    for name in ("TLS_CLIENT_CA_FILE", "TLS_CA_FILE"):
        if name in files:
            try:
                ssl.create_default_context(cadata=files[name].decode("ascii"))
            except (ssl.SSLError, ValueError, UnicodeDecodeError):
                raise ConfigError(f"{name}={names[name]!r} holds no PEM certificate") from None
    return Tls(
        cert=files.get("TLS_CERT_FILE", b""),
        key=files.get("TLS_KEY_FILE", b""),
        client_ca=files.get("TLS_CLIENT_CA_FILE", b""),
        ca=files.get("TLS_CA_FILE", b""),
        server_name=names["TLS_SERVER_NAME"],
        env=tuple((name, value) for name, value in names.items() if value),
    )


def _read(name: str, path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"{name}={path!r} cannot be read ({exc.strerror or exc})") from None
