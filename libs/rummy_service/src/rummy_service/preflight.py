"""What a service checks before it starts: its data directories take a write, Kafka and Redis answer.

Left to the clients, an unreachable Kafka is 30 s of silence and a 56-line traceback from kafka-python's
bootstrap. Here each store is asked directly (Kafka: an ApiVersions round trip on a plain socket; Redis:
PING), again every half second up to `wait_s` (MELDSTREAM_CONNECT_WAIT_S, 15 s by default), saying
what it waits for, and a store that never answers is one `ConfigError` naming the setting to check.
A store that answers with a refusal (a Redis password that is wrong) fails at once: waiting would not
change it.
"""

from __future__ import annotations

import socket
import struct
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import redis
from rummy_store.locations import StoreLocation

from rummy_service.config import DEFAULT_CONNECT_WAIT_S, ConfigError

Say = Callable[[str], None]
ATTEMPT_TIMEOUT_S = 2.0
PROGRESS_EVERY_S = 5.0


@dataclass(frozen=True, slots=True)
class Needs:
    """What a configuration needs before it can start: Kafka and Redis ("" = not used), and the
    directories the embedded store writes, each with the setting that names it."""

    kafka: str = ""
    redis: str = ""
    data_dirs: tuple[tuple[str, str], ...] = ()  # (setting, path)
    wait_s: float = DEFAULT_CONNECT_WAIT_S
    kafka_setting: str = "KAFKA_BOOTSTRAP"
    redis_setting: str = "REDIS_URL"


def store_needs(store: StoreLocation, data_dir_setting: str, wait_s: float) -> Needs:
    """What a service's `store` needs, each part named by the setting that set it: the one URL
    (MELDSTREAM_STORE) for all, or KAFKA_BOOTSTRAP, REDIS_URL and `data_dir_setting`."""
    data = ((store.setting or data_dir_setting, store.directory),) if store.embedded else ()
    return Needs(
        store.kafka,
        store.redis,
        data,
        wait_s,
        kafka_setting=store.setting or "KAFKA_BOOTSTRAP",
        redis_setting=store.setting or "REDIS_URL",
    )


def check(needs: Needs, say: Say) -> None:
    """Return once every need is met; `ConfigError` naming the first that is not."""
    for setting, path in needs.data_dirs:
        writable_dir(path, setting)
    kafka, url = needs.kafka, needs.redis
    if kafka:
        _wait(f"Kafka at {kafka}", needs.kafka_setting, lambda: _kafka_answers(kafka), needs, say)
    if url:
        _wait(f"Redis at {_safe(url)}", needs.redis_setting, lambda: _redis_answers(url), needs, say)


def writable_dir(path: str, setting: str) -> None:
    """`path` takes a new file (or, missing, could be made: its nearest existing parent takes one), and
    every store file in it is writable. Nothing is left behind: no directory is made here."""
    where = Path(path).absolute()
    existing = next(p for p in (where, *where.parents) if p.exists())
    try:
        if not existing.is_dir():
            raise NotADirectoryError(0, f"{existing} is not a directory")
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        raise ConfigError(
            f"{setting}={path!r} is not a directory this process can write ({exc.strerror or exc}): "
            "choose another or make it writable"
        ) from None
    for store in sorted(where.glob("*.sqlite*")):
        try:
            with store.open("r+b"):
                pass
        except OSError as exc:
            raise ConfigError(
                f"{store} cannot be written ({exc.strerror or exc}): make it writable, or choose "
                f"another {setting}"
            ) from None


class _Refused(Exception):
    """The store answered, and said no: waiting will not help."""


def _wait(what: str, setting: str, answers: Callable[[], None], needs: Needs, say: Say) -> None:
    start = time.monotonic()
    deadline = start + needs.wait_s
    said = 0.0
    while True:
        try:
            answers()
            if said:
                say(f"{what} answers")
            return
        except _Refused as exc:
            raise ConfigError(f"{what} refused the connection ({exc}): check {setting}") from None
        except OSError as exc:
            reason = _reason(exc)
        now = time.monotonic()
        if now >= deadline:
            raise ConfigError(
                f"{what} did not answer within {needs.wait_s:g} s ({reason}): check {setting} and that "
                "it is up (MELDSTREAM_CONNECT_WAIT_S waits longer)"
            )
        if not said or now - said >= PROGRESS_EVERY_S:
            say(f"waiting for {what} ({reason}; up to {needs.wait_s:g} s)...")
            said = now
        time.sleep(min(0.5, max(0.0, deadline - time.monotonic())))


def _reason(exc: OSError) -> str:
    if isinstance(exc, socket.gaierror):
        return "name not resolved"
    if isinstance(exc, TimeoutError):
        return "no reply"
    return str(exc.strerror or exc).split("\n")[0].lower()


def _servers(bootstrap: str) -> list[tuple[str, int]]:
    servers = []
    for item in bootstrap.split(","):
        host, _, port = item.strip().rpartition(":")
        if not host or not port.isdigit():
            raise _Refused(f"{item.strip()!r} is not host:port")
        servers.append((host.strip("[]"), int(port)))
    return servers


def _kafka_answers(bootstrap: str) -> None:
    """An ApiVersions (v0) round trip with one of the bootstrap servers; OSError when none answers."""
    failure: OSError = OSError("no bootstrap server")
    for host, port in _servers(bootstrap):
        try:
            with socket.create_connection((host, port), timeout=ATTEMPT_TIMEOUT_S) as sock:
                client = b"meldstream-preflight"
                header = struct.pack(">hhih", 18, 0, 7, len(client)) + client
                sock.sendall(struct.pack(">i", len(header)) + header)
                size, correlation = struct.unpack(">ii", _read(sock, 8))
                if correlation != 7 or size < 6:
                    raise _Refused("not a Kafka broker's answer")
                return
        except OSError as exc:
            failure = exc
    raise failure


def _read(sock: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise ConnectionResetError("closed without an answer")
        data += chunk
    return data


def _redis_answers(url: str) -> None:
    client = redis.Redis.from_url(
        url, socket_timeout=ATTEMPT_TIMEOUT_S, socket_connect_timeout=ATTEMPT_TIMEOUT_S
    )
    try:
        client.ping()
    except (redis.AuthenticationError, redis.ResponseError) as exc:
        raise _Refused(str(exc).split("\n")[0]) from None
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        raise ConnectionError(_cause(exc)) from None
    finally:
        client.close()


def _cause(exc: Exception) -> str:
    """redis-py's message without its "Error 111 connecting to host:port." preamble."""
    text = str(exc).split("\n")[0].rstrip(".")
    return text.rpartition(". ")[2] if ". " in text else text


def _safe(url: str) -> str:
    """A Redis URL as it may be shown: without a password."""
    scheme, sep, rest = url.partition("://")
    _, at, host = rest.rpartition("@")
    return f"{scheme}{sep}{host}" if at else url
