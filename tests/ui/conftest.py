"""Shared fixtures of the UI tests.

`page`: the app in Debian's Chromium through Playwright, served over the two-GPU store of
real shipped softmax kernels (inspector_fixtures.make_two_gpu_store), one per test module; a
module sets `VIEWPORT_HEIGHT` (pixels) when its panels need more room. A module that defines
its own `page` (test_browser.py) uses that one instead.
"""
from __future__ import annotations

import panel as pn
import pytest
from inspector_fixtures import make_two_gpu_store

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def page(request, tmp_path_factory):
    pytest.importorskip("playwright")
    from panel.tests.util import serve_component
    from playwright.sync_api import sync_playwright

    from workbench import app

    store = make_two_gpu_store(tmp_path_factory.mktemp(request.module.__name__.rpartition(".")[2]) / "db.sqlite")
    height = getattr(request.module, "VIEWPORT_HEIGHT", 1100)
    pn.state.cache.clear()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=[
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            pg = browser.new_page(viewport={"width": 1500, "height": height})
            pg.set_default_timeout(60_000)
            serve_component(pg, lambda: app.build(store), address="127.0.0.1")
            pg.wait_for_selector("text=REPLAY MODE", timeout=120_000)
            yield pg
            browser.close()
    finally:
        pn.state.kill_all_servers()
        pn.state.cache.clear()
