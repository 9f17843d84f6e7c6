"""Sign-in end to end in headless Chromium (Debian's): `streamlit run app.py` with an [auth] section
pointing at a local OpenID Connect provider (PyPI `oidc-provider-mock`, on loopback), an allow-list of
one e-mail domain. An allowed analyst gets in, an account of another domain is refused, sign-out
(through the provider's end-session endpoint) leaves the app asking to sign in again.
Screenshots go to tests/artifacts/ (sign_in_prompt.png, sign_in_allowed.png, sign_in_refused.png)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from carenav_core.settings import PROJECT_ROOT
from tests.app.conftest import settings_env
from tests.app.test_browser import ARTIFACTS, CHROMIUM, browser, free_port

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium is not installed")]
ALLOWED, REFUSED = "ann@carenav.test", "mallory@elsewhere.test"


def wait_until_up(url: str, process: subprocess.Popen, what: str) -> None:
    deadline = time.time() + 60
    while time.time() < deadline:
        if process.poll() is not None:
            pytest.fail(f"{what} exited with {process.returncode} before answering {url}")
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"{what} did not answer {url} in 60 s")


@pytest.fixture(scope="module")
def provider():
    """oidc-provider-mock on 127.0.0.1; any sub typed on its form becomes a user with that e-mail."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "oidc_provider_mock", "--host", "127.0.0.1", "--port",
                                str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url + "/.well-known/openid-configuration", process, "oidc-provider-mock")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=20)


@pytest.fixture(scope="module")
def signed_app(full_settings, provider, tmp_path_factory):
    port = free_port()
    secrets = tmp_path_factory.mktemp("signin") / "secrets.toml"
    secrets.write_text(f"""[auth]
redirect_uri = "http://127.0.0.1:{port}/oauth2callback"
cookie_secret = "{os.urandom(16).hex()}"
client_id = "carenav-test"
client_secret = "{os.urandom(8).hex()}"
server_metadata_url = "{provider}/.well-known/openid-configuration"

[access]
domains = ["carenav.test"]
""", encoding="utf-8")
    env = {**os.environ, **settings_env(full_settings), "AUTHLIB_INSECURE_TRANSPORT": "1"}  # provider is http
    for name in ("CARENAV_OLLAMA_HOST", "CARENAV_DATABASE_URL", "CARENAV_ALLOW_ANONYMOUS"):
        env.pop(name, None)
    process = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(PROJECT_ROOT / "app.py"),
                                "--server.headless", "true", "--server.port", str(port), "--server.address",
                                "127.0.0.1", "--secrets.files", str(secrets)], cwd=PROJECT_ROOT, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url + "/_stcore/health", process, "streamlit")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=20)


def loopback_only(context) -> None:
    """The provider's pages link a stylesheet from a CDN: only loopback requests leave the browser."""
    context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("http://127.0.0.1")
                  else route.abort())


def sign_in(page, app: str, provider: str, account: str, screenshot: str | None = None) -> None:
    from playwright.sync_api import expect
    page.goto(app)
    expect(page.get_by_text("Sign in with your company account")).to_be_visible(timeout=60_000)
    assert not page.locator('[data-testid="stSidebarNav"]').count(), "no page is reachable before sign-in"
    if screenshot:
        page.screenshot(path=str(ARTIFACTS / screenshot))
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(provider + "/oauth2/authorize**", timeout=30_000)
    page.fill('input[name="sub"]', account)
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_url(app + "/**", timeout=30_000)


def test_allowed_analyst_signs_in_and_out(signed_app, provider):
    from playwright.sync_api import expect, sync_playwright
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        chromium = browser(p)
        context = chromium.new_context(viewport={"width": 1400, "height": 900})
        loopback_only(context)
        page = context.new_page()
        sign_in(page, signed_app, provider, ALLOWED, screenshot="sign_in_prompt.png")
        expect(page.get_by_text(f"Signed in as {ALLOWED}")).to_be_visible(timeout=60_000)
        expect(page.get_by_placeholder("Ask about Medicare PFS valuation…")).to_be_visible(timeout=60_000)
        assert "Data" in page.locator('[data-testid="stSidebarNav"]').inner_text()
        page.wait_for_timeout(500)
        page.screenshot(path=str(ARTIFACTS / "sign_in_allowed.png"))
        page.get_by_role("button", name="Sign out").click()
        page.wait_for_url(provider + "/oauth2/end_session**", timeout=30_000)
        page.get_by_role("button", name="End session").click()
        page.wait_for_url(signed_app + "/**", timeout=30_000)
        expect(page.get_by_role("button", name="Sign in")).to_be_visible(timeout=30_000)
        page.goto(signed_app + "/codes?codes=G0556")           # a deep link after sign-out is gated too
        expect(page.get_by_role("button", name="Sign in")).to_be_visible(timeout=30_000)
        assert "National payment by year" not in page.inner_text("body")
        chromium.close()


def test_other_domain_is_refused(signed_app, provider):
    from playwright.sync_api import expect, sync_playwright
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        chromium = browser(p)
        context = chromium.new_context(viewport={"width": 1400, "height": 900})
        loopback_only(context)
        page = context.new_page()
        sign_in(page, signed_app, provider, REFUSED)
        expect(page.get_by_text("Access refused")).to_be_visible(timeout=60_000)
        body = page.inner_text("body")
        assert REFUSED in body and "not on this deployment's allow-list" in body
        assert not page.get_by_placeholder("Ask about Medicare PFS valuation…").count()
        assert not page.locator('[data-testid="stSidebarNav"]').count()
        page.screenshot(path=str(ARTIFACTS / "sign_in_refused.png"))
        page.goto(signed_app + "/data")                       # no page behind the refusal either
        expect(page.get_by_text("Access refused")).to_be_visible(timeout=60_000)
        assert "CMS RVU releases" not in page.inner_text("body")
        chromium.close()
