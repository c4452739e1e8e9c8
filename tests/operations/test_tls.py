"""TLS on the engine's gRPC port when certificate files are configured: the SDK and `meldstream health`
talk to it with the CA file, and a plaintext client gets nowhere; with a client CA, a client without a
certificate signed by it is turned away too. The certificates are made here (`cryptography`)."""

from __future__ import annotations

import asyncio
import datetime as dt
import ipaddress
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from grpc_health.v1 import health_pb2, health_pb2_grpc
from rummy_client import GameClient, RpcFailure
from rummy_contracts.house import house_bots
from rummy_engine.config import EngineConfig
from rummy_engine.engine import RunningEngine, start_engine
from rummy_identity.testing import IdentityProcess
from rummy_service.tls import Tls, load_tls


@dataclass(frozen=True)
class Pki:
    """PEM files: a CA, a server certificate for localhost and 127.0.0.1, a client certificate."""

    ca: Path
    cert: Path
    key: Path
    client_cert: Path
    client_key: Path


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _certificate(
    name: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey] | None,
    *,
    ca: bool = False,
    usage: x509.ObjectIdentifier | None = None,
) -> x509.Certificate:
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    issuer_name, signer = issuer if issuer is not None else (subject, key)
    now = dt.datetime.now(dt.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if usage is not None:
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if usage == ExtendedKeyUsageOID.SERVER_AUTH:
        names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(signer, hashes.SHA256())


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    where = tmp_path_factory.mktemp("pki")
    ca_key, server_key, client_key = _key(), _key(), _key()
    ca = _certificate("meldstream test CA", ca_key, None, ca=True)
    issuer = (ca.subject, ca_key)
    server = _certificate("localhost", server_key, issuer, usage=ExtendedKeyUsageOID.SERVER_AUTH)
    client = _certificate("matchmaking", client_key, issuer, usage=ExtendedKeyUsageOID.CLIENT_AUTH)
    files = {
        "ca.pem": ca.public_bytes(serialization.Encoding.PEM),
        "cert.pem": server.public_bytes(serialization.Encoding.PEM),
        "key.pem": _pem_key(server_key),
        "client.pem": client.public_bytes(serialization.Encoding.PEM),
        "client-key.pem": _pem_key(client_key),
    }
    for name, data in files.items():
        (where / name).write_bytes(data)
    return Pki(*(where / name for name in files))


@pytest.fixture(scope="module")
def tls_identity(pki: Pki) -> Iterator[IdentityProcess]:
    """An identity serving TLS with the test's certificate: the engine fetches its keys over TLS."""
    served = {"TLS_CERT_FILE": str(pki.cert), "TLS_KEY_FILE": str(pki.key)}
    process = IdentityProcess(served, channel=grpc.ssl_channel_credentials(pki.ca.read_bytes()))
    process.start()
    yield process
    process.stop()


def _served(config: EngineConfig, scenario: Callable[[RunningEngine], Awaitable[None]]) -> None:
    async def main() -> None:
        engine = await start_engine(config)
        try:
            await scenario(engine)
        finally:
            await engine.stop()

    asyncio.run(main())


async def _health(address: str, channel: grpc.aio.Channel) -> int:
    async with channel:
        stub: Any = health_pb2_grpc.HealthStub(channel)
        reply = await stub.Check(health_pb2.HealthCheckRequest(), timeout=5)
        return int(reply.status)


def _meldstream_health(address: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TLS_")}
    command = [sys.executable, "-m", "meldstream_cli.main", "health", address, *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)


def test_the_engine_serves_tls_to_clients_with_the_ca_and_refuses_plaintext(
    pki: Pki, tmp_path: Path, tls_identity: IdentityProcess
) -> None:
    served = {"TLS_CERT_FILE": str(pki.cert), "TLS_KEY_FILE": str(pki.key), "TLS_CA_FILE": str(pki.ca)}
    tls = load_tls(served)
    config = EngineConfig(
        address="127.0.0.1:0", data_dir=str(tmp_path), tls=tls, identity=tls_identity.address
    )
    ca = pki.ca.read_bytes()
    ann = tls_identity.player("ann")

    async def scenario(engine: RunningEngine) -> None:
        credentials = grpc.ssl_channel_credentials(ca)
        async with GameClient(engine.address, ann.token, credentials=credentials) as client:
            created = await client.create_game("rummy500", [ann.id, *house_bots(2)])
            assert (await client.view(created.game_id, 0)).seats[0].player_id == ann.id
        secure = grpc.aio.secure_channel(engine.address, credentials)
        assert await _health(engine.address, secure) == health_pb2.HealthCheckResponse.SERVING
        async with GameClient(engine.address, ann.token, retry_for_s=0, timeout_s=3) as plain:
            with pytest.raises(RpcFailure) as refused:
                await plain.view(created.game_id, 0)
            assert refused.value.status == grpc.StatusCode.UNAVAILABLE
        with pytest.raises(grpc.aio.AioRpcError):
            await _health(engine.address, grpc.aio.insecure_channel(engine.address))
        # The health check of the image (meldstream health), with and without the CA.
        checked = await asyncio.to_thread(_meldstream_health, engine.address, "--ca-file", str(pki.ca))
        assert checked.returncode == 0, checked.stderr
        assert checked.stdout.strip() == f"{engine.address}: SERVING"
        plain_check = await asyncio.to_thread(_meldstream_health, engine.address)
        assert plain_check.returncode == 1
        assert plain_check.stderr.startswith(f"meldstream health: {engine.address}: no answer")

    _served(config, scenario)


def test_with_a_client_ca_only_clients_with_its_certificate_get_in(
    pki: Pki, tmp_path: Path, tls_identity: IdentityProcess
) -> None:
    files = {
        "TLS_CERT_FILE": pki.cert,
        "TLS_KEY_FILE": pki.key,
        "TLS_CLIENT_CA_FILE": pki.ca,
        "TLS_CA_FILE": pki.ca,
    }
    tls = load_tls({name: str(path) for name, path in files.items()})
    config = EngineConfig(
        address="127.0.0.1:0", data_dir=str(tmp_path), tls=tls, identity=tls_identity.address
    )
    ca = pki.ca.read_bytes()
    # What another service calling the engine uses: its own certificate goes along (rummy_service.tls).
    caller = Tls(
        cert=pki.client_cert.read_bytes(), key=pki.client_key.read_bytes(), client_ca=ca, ca=ca
    ).channel_credentials()
    assert caller is not None

    async def scenario(engine: RunningEngine) -> None:
        serving = health_pb2.HealthCheckResponse.SERVING
        assert await _health(engine.address, grpc.aio.secure_channel(engine.address, caller)) == serving
        anonymous = grpc.aio.secure_channel(engine.address, grpc.ssl_channel_credentials(ca))
        with pytest.raises(grpc.aio.AioRpcError):
            await _health(engine.address, anonymous)

    _served(config, scenario)
