"""Development mode and secrets: the public development values only with MELDSTREAM_DEV=1, real secrets
of 32 bytes or more otherwise (the engine's seed key, identity's key secret, and matchmaking's forward
secret once its instances forward calls to each other, with Redis; every other service holds public
keys only, so it has no secret); and the settings checked before anything listens (addresses, Redis
URL, TLS files)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from meldstream_web import config as web_config
from rummy_engine import config as engine_config
from rummy_engine.seeds import DEV_SEED_KEY
from rummy_identity import config as identity_config
from rummy_identity.config import DEV_KEY_SECRET
from rummy_matchmaking import config as matchmaking_config
from rummy_matchmaking.config import DEV_FORWARD_SECRET
from rummy_service.config import ConfigError, address_setting, dev_mode, redis_url, secret, secrets
from rummy_service.tls import load_tls

GOOD = "0123456789abcdef0123456789abcdef"  # 32 bytes
REDIS = "redis://redis:6379/0"
SECRETS: dict[str, tuple[Callable[[Mapping[str, str]], Any], str, str, str]] = {
    # service: (its loader, its secret's variable, the public development value, the loaded field)
    "engine": (engine_config.load, "ENGINE_SEED_KEY", DEV_SEED_KEY, "seed_key"),
    "identity": (identity_config.load, "IDENTITY_KEY_SECRET", DEV_KEY_SECRET, "key_secret"),
    "matchmaking instances": (
        lambda env: matchmaking_config.load({"KAFKA_BOOTSTRAP": "kafka:9092", "REDIS_URL": REDIS, **env}),
        "MATCHMAKING_FORWARD_SECRET",
        DEV_FORWARD_SECRET,
        "forward_secret",
    ),
}
PUBLIC_KEYS_ONLY: dict[str, Callable[[Mapping[str, str]], Any]] = {
    "matchmaking": matchmaking_config.load,
    "web": web_config.load,
}


def production(**env: str) -> dict[str, str]:
    return {"MELDSTREAM_DEV": "0", "ENGINE_SEED_KEY": GOOD[::-1], "IDENTITY_KEY_SECRET": GOOD, **env}


@pytest.mark.parametrize(
    ("raw", "dev"), [("", False), ("0", False), ("1", True), ("true", True), ("no", False)]
)
def test_development_mode_is_explicit(raw: str, dev: bool) -> None:
    assert dev_mode({"MELDSTREAM_DEV": raw}) is dev


def test_a_development_mode_that_is_not_yes_or_no_is_refused() -> None:
    with pytest.raises(ConfigError, match="MELDSTREAM_DEV='maybe'"):
        dev_mode({"MELDSTREAM_DEV": "maybe"})


def test_a_secret_outside_development_mode_must_be_set_real_and_long() -> None:
    assert secret("S", "public", {"S": GOOD}, dev=False) == GOOD
    with pytest.raises(ConfigError, match=r"S is not set: .*openssl rand -hex 32.*MELDSTREAM_DEV=1"):
        secret("S", "public", {}, dev=False)
    with pytest.raises(ConfigError, match="S is empty"):
        secret("S", "public", {"S": ""}, dev=False)
    with pytest.raises(ConfigError, match="S is the public development value, refused"):
        secret("S", "public", {"S": "public"}, dev=False)
    with pytest.raises(ConfigError, match="S is 31 bytes, too short"):
        secret("S", "public", {"S": GOOD[:31]}, dev=False)


def test_every_secret_wrong_is_named_at_once() -> None:
    wanted = {"A": "public-a", "B": "public-b", "C": "public-c", "D": "public-d"}
    with pytest.raises(ConfigError) as refused:
        secrets(wanted, {"B": "public-b", "C": "short", "D": GOOD}, dev=False)
    assert str(refused.value) == (
        "A is not set; B is the public development value, refused outside development mode; C is 5 bytes, "
        "too short: set each to a random secret of 32 bytes or more (`openssl rand -hex 32`), or "
        "MELDSTREAM_DEV=1 for local development"
    )
    assert secrets(wanted, {"D": GOOD}, dev=True) == {**wanted, "D": GOOD}


def test_development_mode_takes_the_public_value_but_still_refuses_a_short_secret() -> None:
    assert secret("S", "public", {}, dev=True) == "public"
    assert secret("S", "public", {"S": "public"}, dev=True) == "public"
    with pytest.raises(ConfigError, match="too short"):
        secret("S", "public", {"S": "short"}, dev=True)


@pytest.mark.parametrize("service", SECRETS)
def test_every_secret_is_refused_unset_or_public_without_development_mode(service: str) -> None:
    load, variable, development, attr = SECRETS[service]
    with pytest.raises(ConfigError, match=f"{variable} is not set"):
        load({"MELDSTREAM_DEV": "0"})
    with pytest.raises(ConfigError, match=f"{variable} is the public development value"):
        load(production(**{variable: development}))
    with pytest.raises(ConfigError, match=f"{variable} is 16 bytes, too short"):
        load(production(**{variable: GOOD[:16]}))
    assert getattr(load(production(**{variable: GOOD})), attr) == GOOD
    assert getattr(load({"MELDSTREAM_DEV": "1"}), attr) == development


@pytest.mark.parametrize("service", PUBLIC_KEYS_ONLY)
def test_a_service_that_only_verifies_tokens_needs_no_secret(service: str) -> None:
    """Matchmaking (one instance, no Redis) and the gateway hold identity's public keys, fetched:
    nothing to set or to leak."""
    loaded = PUBLIC_KEYS_ONLY[service]({"MELDSTREAM_DEV": "0", "IDENTITY_ADDRESS": "identity:50054"})
    assert loaded.identity == "identity:50054"


@pytest.mark.parametrize("dev", ["0", "1"])
def test_a_single_matchmaking_signs_forwards_with_a_key_of_its_own_never_the_public_one(dev: str) -> None:
    """Without Redis nothing is forwarded: an unset forward secret is random, so no client can make a
    call it takes as forwarded (the public development value would let any client do so)."""
    first, second = (matchmaking_config.load({"MELDSTREAM_DEV": dev}).forward_secret for _ in range(2))
    assert DEV_FORWARD_SECRET not in (first, second) and first != second and len(first) >= 32


def test_replay_and_verify_need_no_secret_to_read_the_log() -> None:
    loaded = engine_config.load({"MELDSTREAM_DEV": "0"}, secrets=False)
    assert loaded.embedded  # reads on without ENGINE_SEED_KEY


def test_a_development_configuration_starts_its_other_engines_in_development_mode() -> None:
    loaded = engine_config.load({"MELDSTREAM_DEV": "1"})
    assert loaded.to_env()["MELDSTREAM_DEV"] == "1"
    assert "MELDSTREAM_DEV" not in engine_config.load(production()).to_env()


def test_access_tokens_live_ten_minutes_unless_set_and_at_least_ten_seconds() -> None:
    def ttl(**env: str) -> int:
        return int(identity_config.load({"MELDSTREAM_DEV": "1", **env}).keys.access_ttl_s)

    assert ttl() == 600
    assert ttl(IDENTITY_ACCESS_TTL_S="900") == 900
    with pytest.raises(ConfigError, match="IDENTITY_ACCESS_TTL_S=5 is below the minimum 10"):
        ttl(IDENTITY_ACCESS_TTL_S="5")


@pytest.mark.parametrize("value", ["localhost", "127.0.0.1:99999", ":50051", "::1:50051", "127.0.0.1:port"])
def test_an_address_is_host_and_a_port_in_range(value: str) -> None:
    with pytest.raises(ConfigError, match=r"X=.* (is not HOST:PORT|IPv6 host in brackets)"):
        address_setting("X", "127.0.0.1:1", {"X": value})


@pytest.mark.parametrize("value", ["0.0.0.0:0", "[::1]:50051", "engine:65535"])
def test_good_addresses_pass(value: str) -> None:
    assert address_setting("X", "127.0.0.1:1", {"X": value}) == value


def test_a_redis_url_is_a_url() -> None:
    assert redis_url("R", {"R": "redis://redis:6379/0"}) == "redis://redis:6379/0"
    with pytest.raises(ConfigError, match="R='redis:6379' is not a Redis URL"):
        redis_url("R", {"R": "redis:6379"})


def test_tls_files_are_checked_once_at_start(tmp_path: Path) -> None:
    assert not load_tls({}).serves and not load_tls({}).calls
    with pytest.raises(ConfigError, match="set both TLS_CERT_FILE and TLS_KEY_FILE"):
        load_tls({"TLS_CERT_FILE": "cert.pem"})
    with pytest.raises(ConfigError, match=r"TLS_CA_FILE='.*missing.pem' cannot be read"):
        load_tls({"TLS_CA_FILE": str(tmp_path / "missing.pem")})
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate")
    with pytest.raises(ConfigError, match=r"TLS_CA_FILE=.* holds no PEM certificate"):
        load_tls({"TLS_CA_FILE": str(junk)})
    with pytest.raises(ConfigError, match="are not a certificate and its key"):
        load_tls({"TLS_CERT_FILE": str(junk), "TLS_KEY_FILE": str(junk)})
    with pytest.raises(ConfigError, match=r"TLS_CLIENT_CA_FILE .* needs TLS_CERT_FILE"):
        load_tls({"TLS_CLIENT_CA_FILE": str(junk)})
