"""End to end in headless Chromium (Debian's) against `streamlit run` on loopback."""
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from carenav_core.settings import PROJECT_ROOT
from tests.app.conftest import settings_env

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = PROJECT_ROOT / "tests" / "artifacts"
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium is not installed")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def served_app(full_settings):
    port = free_port()
    env = {**os.environ, **settings_env(full_settings)}
    env.pop("CARENAV_OLLAMA_HOST", None)
    process = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(PROJECT_ROOT / "app.py"),
                                "--server.headless", "true", "--server.port", str(port),
                                "--server.address", "127.0.0.1"], cwd=PROJECT_ROOT, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                break
        except OSError:
            time.sleep(0.3)
    else:
        process.kill()
        pytest.fail("streamlit did not become healthy in 60 s")
    yield url
    process.terminate()
    process.wait(timeout=20)


def browser(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=[
        "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--disable-quic", "--no-first-run"])


def test_deep_link_on_a_fresh_server_goes_through_app_navigation(served_app):
    """First request of the server is a shared link to a page: it must render through app.py."""
    from playwright.sync_api import expect, sync_playwright
    with sync_playwright() as p:
        chromium = browser(p)
        page = chromium.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(served_app + "/codes?codes=G0556,99490")
        expect(page.get_by_text("National payment by year").first).to_be_visible(timeout=60_000)
        nav = page.locator('[data-testid="stSidebarNav"]').inner_text()
        assert "Chat" in nav and "Codes" in nav and "app" not in nav.split()
        assert "codes=G0556" in page.url
        chromium.close()


def test_ask_apcm_in_chromium(served_app):
    from playwright.sync_api import expect, sync_playwright
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        chromium = browser(p)
        page = chromium.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(served_app)
        box = page.get_by_placeholder("Ask about Medicare PFS valuation…")
        box.wait_for(timeout=60_000)
        box.fill("What is APCM and how is it valued?")
        box.press("Enter")
        table = page.locator('[data-testid="stDataFrame"]').first
        expect(table).to_be_visible(timeout=60_000)
        expect(page.get_by_text("No language model wrote this answer").first).to_be_visible(timeout=60_000)
        expect(page.get_by_text("Sources").first).to_be_visible()
        body = page.inner_text("body")
        assert "[PFS CY2026 RVU26C]" in body and "$16.37" in body
        assert "q=What" in page.url
        page.screenshot(path=str(ARTIFACTS / "chat_answer.png"))
        table.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        page.screenshot(path=str(ARTIFACTS / "chat_table.png"))
        chromium.close()


@pytest.mark.parametrize("path, text", [("/codes?codes=G0556,G0557", "National payment by year"),
                                        ("/data", "CMS RVU releases")])
def test_other_pages_in_chromium(served_app, path, text):
    from playwright.sync_api import expect, sync_playwright
    with sync_playwright() as p:
        chromium = browser(p)
        page = chromium.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(served_app + path)
        expect(page.get_by_text(text).first).to_be_visible(timeout=60_000)
        page.wait_for_timeout(1500)                       # let charts finish drawing
        page.screenshot(path=str(ARTIFACTS / f"page_{path.strip('/').split('?')[0]}.png"))
        chromium.close()
