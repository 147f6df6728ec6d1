"""Hostile text in a real browser (Debian's Chromium through Playwright).

The app (`workbench.app.build`) is served on 127.0.0.1 over a store whose candidate carries
script payloads in its source, origin, failure reason, log and forecast reasoning
(hostile_fixtures). Opening that candidate from the Dataset table must show every payload as
literal text and run none of it (`window.__pwned` stays undefined); the page, from loading to the
open Inspector, requests nothing from any host but this machine. Served on every interface with
no login, the same app shows only the refusal.
"""
from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

import panel as pn
import pytest
from browser_steps import open_in_inspector
from hostile_fixtures import HOSTILE_ID, OUTSIDE_IMAGE, PAYLOAD, make_hostile_store

CHROMIUM = "/usr/bin/chromium"
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium not installed (`make browser`)"),
]


@pytest.fixture(scope="module")
def browser():
    pytest.importorskip("playwright")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        yield b
        b.close()


@pytest.fixture
def served(browser, tmp_path, monkeypatch):
    """served(address) -> (page, urls of every request the page made), the app over the store."""
    from panel.tests.util import serve_component

    from workbench import app

    monkeypatch.delenv("WORKBENCH_ALLOW_REMOTE", raising=False)
    store = make_hostile_store(tmp_path / "hostile.sqlite")
    pn.state.cache.clear()
    pages = []

    def serve(address: str):
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(60_000)
        pages.append(page)
        urls: list[str] = []
        page.on("request", lambda r: urls.append(r.url))
        serve_component(page, lambda: app.build(store), address=address)
        return page, urls

    try:
        yield serve
    finally:
        for page in pages:
            page.close()
        pn.state.kill_all_servers()
        pn.state.cache.clear()


def _open_hostile_candidate(page) -> None:
    page.locator(".bk-tab", has_text="Dataset").first.click()
    open_in_inspector(page, page.locator(".tabulator-row", has_text=HOSTILE_ID).first)
    page.wait_for_selector(".wb-reason")


def test_hostile_texts_are_shown_literally_and_never_run(served):
    from playwright.sync_api import expect

    page, _ = served("127.0.0.1")
    row = page.locator(".tabulator-row", has_text=HOSTILE_ID).first
    _open_hostile_candidate(page)
    # The Dataset table (Tabulator) shows the reason as text too.
    expect(row.locator("[tabulator-field=reason]")).to_have_text(f"wrong output {PAYLOAD}"[:120])
    expect(page.locator(".wb-reason")).to_have_text(f"wrong output {PAYLOAD}")
    expect(page.locator(".wb-log-text")).to_have_text(f"compiling\n```\n{PAYLOAD}\n{OUTSIDE_IMAGE}\n")
    expect(page.locator(".wb-reasoning-text")).to_have_text(f"I think {PAYLOAD} {OUTSIDE_IMAGE}")
    expect(page.locator("code", has_text="llm:<img").first).to_have_text(f"llm:{PAYLOAD}")
    expect(page.locator(".wb-diff td", has_text="# <img").first).to_contain_text(f"# {PAYLOAD}")
    page.wait_for_timeout(500)  # an onerror handler runs as soon as the broken image fails
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img[src=x]").count() == 0 and page.locator("script", has_text="__pwned").count() == 0


def test_page_requests_nothing_off_the_machine(served):
    page, urls = served("127.0.0.1")
    for name in ("Search", "Calibration", "Inspector"):
        page.locator(".bk-tab", has_text=name).first.click()
    _open_hostile_candidate(page)
    page.wait_for_load_state("networkidle")
    hosts = {urlparse(u).hostname for u in urls if not u.startswith(("data:", "blob:", "about:"))}
    assert len(urls) > 10 and hosts and hosts <= LOCAL_HOSTS, sorted(set(urls))


def test_served_on_every_interface_without_login_shows_only_the_refusal(served):
    from playwright.sync_api import expect

    page, _ = served("0.0.0.0")
    expect(page.locator(".wb-refusal p").first).to_contain_text("Not served")
    assert page.get_by_text("REPLAY MODE").count() == 0 and page.locator(".bk-tab").count() == 0
