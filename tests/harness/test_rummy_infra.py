"""The test harness itself: it honours the environment, refuses unmarked server use, stops what it starts."""

from __future__ import annotations

import pytest
import redis
from rummy_infra import local

pytest_plugins = ["pytester"]

PLUGIN = ("-p", "rummy_infra.pytest_plugin", "-p", "no:cacheprovider")


def test_addresses_from_the_environment_are_used_and_named(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MELDSTREAM_KAFKA", "127.0.0.1:1")
    monkeypatch.setenv("MELDSTREAM_REDIS", "127.0.0.1:2")
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.integration
        def test_addresses(kafka_bootstrap, redis_url):
            assert kafka_bootstrap == "127.0.0.1:1"
            assert redis_url == "redis://127.0.0.1:2/0"
        """
    )
    pytester.makeini("[pytest]\nmarkers = integration: real servers")
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "meldstream servers: kafka from $MELDSTREAM_KAFKA=127.0.0.1:1; redis from $MELDSTREAM_REDIS=*",
            "kafka: 127.0.0.1:1 from $MELDSTREAM_KAFKA",
            "redis: redis://127.0.0.1:2/0 from $MELDSTREAM_REDIS",
        ]
    )


@pytest.mark.parametrize("fixture", ["redis_url", "kafka_cluster"])
def test_unmarked_test_asking_for_a_server_fails_before_anything_starts(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, fixture: str
) -> None:
    monkeypatch.delenv("MELDSTREAM_REDIS", raising=False)
    pytester.makepyfile(f"def test_sneaky({fixture}):\n    pass\n")
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*uses a real server but is not marked @pytest.mark.integration*", "none (*"]
    )


def answers(url: str) -> bool:
    client = redis.Redis.from_url(url, socket_connect_timeout=1)
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False
    finally:
        client.close()


@pytest.mark.integration
def test_local_redis_runs_on_a_free_port_and_is_stopped_on_exit() -> None:
    with local.redis() as (url, version), local.redis() as (other_url, _):
        assert url != other_url  # concurrent runs never share a server
        assert answers(url) and answers(other_url)
        assert version[0].isdigit()
    assert not answers(url) and not answers(other_url)
