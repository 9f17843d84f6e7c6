"""Sign-in gate (carenav_core/ui/auth.py): who is admitted, when anonymous use is refused, the
preflight's exit code, and the gate in front of every page of app.py (AppTest; the browser flow with a
real OpenID Connect provider is in test_sign_in_browser.py)."""
from __future__ import annotations

import pytest
from streamlit import config
from streamlit.testing.v1 import AppTest

from carenav_core.settings import PROJECT_ROOT
from carenav_core.ui.auth import AccessList, anonymous_refusal, decide, is_loopback, main


@pytest.mark.parametrize("address, loopback", [
    ("localhost", True), ("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("[::1]", True),
    ("0.0.0.0", False), ("::", False), ("10.0.0.5", False), ("carenav.example.org", False), ("", False),
    (None, False),                                  # unset: Streamlit binds every interface
])
def test_loopback_addresses(address, loopback):
    assert is_loopback(address) is loopback


@pytest.mark.parametrize("address, sign_in, anonymous, refused", [
    ("127.0.0.1", False, False, False),
    ("0.0.0.0", False, False, True),
    (None, False, False, True),
    ("0.0.0.0", True, False, False),
    ("0.0.0.0", False, True, False),
])
def test_anonymous_use_is_refused_off_loopback(address, sign_in, anonymous, refused):
    message = anonymous_refusal(address, sign_in=sign_in, allow_anonymous=anonymous)
    assert (message is not None) is refused
    if refused:
        assert "CARENAV_ALLOW_ANONYMOUS=1" in message and "secrets.toml" in message


ACCESS = AccessList(domains=["carenav.test"], emails=["guest@partner.test"], groups=["carenav-analysts"])


@pytest.mark.parametrize("claims, allowed, words", [
    ({"email": "ann@carenav.test"}, True, "domain"),
    ({"email": "Ann@CareNav.Test", "email_verified": True}, True, "domain"),
    ({"email": "guest@partner.test"}, True, "allow-list"),
    ({"email": "bob@partner.test", "groups": ["carenav-analysts", "x"]}, True, "carenav-analysts"),
    ({"email": "bob@partner.test", "groups": "carenav-analysts"}, True, "carenav-analysts"),
    ({"email": "mallory@elsewhere.test"}, False, "not on this deployment's allow-list"),
    ({"email": "ann@carenav.test.evil.org"}, False, "not on this deployment's allow-list"),
    ({"email": "ann@evil.carenav.test"}, False, "not on this deployment's allow-list"),
    ({"email": "ann@carenav.test", "email_verified": False}, False, "not verified"),
    ({"sub": "no-email"}, False, "this account"),
])
def test_allow_list_decisions(claims, allowed, words):
    decision = decide(claims, ACCESS)
    assert decision.allowed is allowed and words in decision.reason


def test_an_empty_allow_list_admits_nobody():
    decision = decide({"email": "ann@carenav.test"}, AccessList())
    assert not decision.allowed and "empty" in decision.reason


def test_access_section_rejects_unknown_keys():
    with pytest.raises(ValueError, match="domain"):
        AccessList.model_validate({"domain": ["carenav.test"]})


def test_preflight_exit_codes(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("CARENAV_ALLOW_ANONYMOUS", raising=False)
    no_auth, with_auth = tmp_path / "none.toml", tmp_path / "auth.toml"
    no_auth.write_text('[access]\ndomains = ["carenav.test"]\n')
    with_auth.write_text('[auth]\nclient_id = "x"\n')
    assert main(["--address", "0.0.0.0", "--secrets", str(no_auth)]) == 2
    assert "refuses to serve without sign-in on 0.0.0.0" in capsys.readouterr().err
    assert main(["--address", "127.0.0.1", "--secrets", str(no_auth)]) == 0
    assert main(["--address", "0.0.0.0", "--secrets", str(with_auth)]) == 0
    monkeypatch.setenv("CARENAV_ALLOW_ANONYMOUS", "1")
    assert main(["--address", "0.0.0.0", "--secrets", str(no_auth)]) == 0


@pytest.fixture
def app_at(tmp_path, monkeypatch):
    """app.py on an empty data folder (the Chat page then stops at 'no database'), address restored after."""
    from tests.app.conftest import use_settings
    from carenav_core.settings import Settings
    use_settings(Settings(data_dir=tmp_path, mirror=tmp_path), monkeypatch)
    monkeypatch.delenv("CARENAV_ALLOW_ANONYMOUS", raising=False)
    before = config.get_option("server.address")
    yield lambda: AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=60)
    config.set_option("server.address", before)


def test_app_refuses_every_page_off_loopback_without_sign_in(app_at):
    config.set_option("server.address", "0.0.0.0")
    at = app_at().run()
    assert not at.exception
    assert any("refuses to serve without sign-in on 0.0.0.0" in e.value for e in at.error)
    assert not at.warning, "no page may run (the Chat page would warn about the missing database)"


def test_app_on_loopback_says_sign_in_is_off(app_at):
    config.set_option("server.address", "127.0.0.1")
    at = app_at().run()
    assert not at.exception and not at.error
    assert any("Sign-in is off" in i.value and "this machine only" in i.value for i in at.sidebar.info)
    assert any("No fee-schedule database" in w.value for w in at.warning), "the page ran behind the banner"


def test_app_allowed_anonymous_off_loopback_says_so(app_at, monkeypatch):
    config.set_option("server.address", "0.0.0.0")
    monkeypatch.setenv("CARENAV_ALLOW_ANONYMOUS", "1")
    at = app_at().run()
    assert not at.exception and not at.error
    assert any("anyone who reaches this address" in i.value for i in at.sidebar.info)


def test_app_with_sign_in_configured_asks_to_sign_in_first(app_at):
    config.set_option("server.address", "0.0.0.0")
    at = app_at()
    at.secrets["auth"] = {"redirect_uri": "http://127.0.0.1:9/oauth2callback", "cookie_secret": "s",
                          "client_id": "c", "client_secret": "s",
                          "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"}
    at.run()
    assert not at.exception and not at.error and not at.warning
    assert [b.label for b in at.button] == ["Sign in"]
