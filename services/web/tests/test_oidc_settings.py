"""The gateway's OpenID provider settings (WEB_OIDC_*) and the flow's checks that need no provider: the
sign-in it runs end to end is tests/browser/test_provider_sign_in.py."""

from __future__ import annotations

import pytest
from meldstream_web.app import create_app
from meldstream_web.config import load
from meldstream_web.oidc import FlowFailed, OidcSettings, ProviderFlow, shown_code
from rummy_service.config import ConfigError

BASE = {
    "WEB_ADDRESS": "127.0.0.1:8123",
    "MELDSTREAM_SERVICE_CREDENTIAL": "mss_web_x",
    "WEB_OIDC_ISSUER": "https://id.example.com/realms/games",
    "WEB_OIDC_CLIENT_ID": "meldstream",
    "WEB_OIDC_CLIENT_SECRET": "s3cret",
}


def test_no_issuer_is_no_provider() -> None:
    assert not load({}).oidc.configured


def test_the_settings_and_their_defaults() -> None:
    oidc = load(BASE).oidc
    assert oidc == OidcSettings(
        "https://id.example.com/realms/games",
        "meldstream",
        "s3cret",
        "http://127.0.0.1:8123/api/oidc/callback",  # the gateway's own URL
        "id.example.com",
    )
    named = load(
        {**BASE, "WEB_OIDC_NAME": "Acme", "WEB_OIDC_REDIRECT_URI": "https://play.example/api/oidc/callback"}
    )
    assert (named.oidc.name, named.oidc.redirect_uri) == ("Acme", "https://play.example/api/oidc/callback")


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"WEB_OIDC_CLIENT_ID": ""}, "WEB_OIDC_CLIENT_ID"),
        ({"WEB_OIDC_ISSUER": ""}, "WEB_OIDC_ISSUER"),
        ({"WEB_OIDC_ISSUER": "http://id.example.com/"}, "https is required"),
        ({"WEB_OIDC_ISSUER": "id.example.com"}, "WEB_OIDC_ISSUER"),
        ({"WEB_OIDC_REDIRECT_URI": "http://play.example/cb"}, "WEB_OIDC_REDIRECT_URI"),
        ({"WEB_OIDC_NAME": "x" * 41}, "WEB_OIDC_NAME"),
        ({"WEB_OIDC_NAME": "a\u202eb"}, "WEB_OIDC_NAME"),
    ],
)
def test_settings_it_cannot_use_stop_it_naming_the_variable(changes: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        load({**BASE, **changes})


def test_a_gateway_with_a_provider_and_no_credential_does_not_start() -> None:
    without = load({**BASE, "MELDSTREAM_SERVICE_CREDENTIAL": ""})  # `meldstream run` gives it one later
    with pytest.raises(ConfigError, match="MELDSTREAM_SERVICE_CREDENTIAL"):
        create_app(without)
    create_app(load(BASE))


def test_plain_http_is_for_loopback_only() -> None:
    local = load({**BASE, "WEB_OIDC_ISSUER": "http://localhost:9998/"}).oidc
    assert local.issuer == "http://localhost:9998/" and local.name == "localhost"


def test_a_callback_is_taken_only_with_the_state_of_this_browser_s_cookie() -> None:
    flow = ProviderFlow(load(BASE).oidc)
    kept = flow.pending("st.no.ver", "st")
    assert (kept.state, kept.nonce, kept.verifier) == ("st", "no", "ver")
    for cookie, state in (
        ("st.no.ver", "other"),
        ("", "st"),
        ("st.no", "st"),
        ("st..ver", "st"),
        ("x" * 600, "x"),
    ):
        with pytest.raises(FlowFailed) as info:
            flow.pending(cookie, state)
        assert info.value.code == "bad_state"
    assert (
        flow.cookie_name == "__Host-ms_oidc"
        and ProviderFlow(flow.settings, secure=False).cookie_name == "ms_oidc"
    )


def test_only_a_reason_code_of_identity_s_reaches_the_page() -> None:
    assert shown_code("suspended: this account is suspended") == "suspended"
    assert shown_code("<script>: x") == "provider_failed"
    assert shown_code("") == "provider_failed"
