"""Shared fixtures of the UI tests.

`page`: the app in Debian's Chromium through Playwright, served over the two-GPU store of
real shipped softmax kernels (inspector_fixtures.make_two_gpu_store), one per test module; a
module sets `VIEWPORT_HEIGHT` (pixels) when its panels need more room. A module that defines
its own `page` (test_browser.py) uses that one instead; a module may define `make_store(path)`
to serve another store, and `runner_build(store, spec)` to give the app's search runner a
builder of its own (tests/ui/search_fixtures.py).

A browser test that runs out of time (a Playwright wait, in the test or in its fixtures) fails
with a message that says what it waited for and how long, that a slow or loaded machine is the
usual cause, and how to rerun it alone; not with Playwright's bare timeout.
"""
from __future__ import annotations

import os
import time

import panel as pn
import pytest
from inspector_fixtures import make_two_gpu_store

CHROMIUM = "/usr/bin/chromium"


def _playwright_timeout(exc: BaseException) -> bool:
    """A Playwright wait that ran out of time (an `expect` or a `wait_for_*`)."""
    text = str(exc)
    return type(exc).__name__ == "TimeoutError" and "playwright" in type(exc).__module__ or (
        isinstance(exc, AssertionError) and "Call log:" in text and "with timeout" in text)


def slow_machine_message(test: str, exc: BaseException, waited_s: float | None = None) -> str:
    """What to say when a browser wait ran out of time."""
    first = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
    load = (f"; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores" if hasattr(os, "getloadavg")
            else "")
    spent = f" after {waited_s:.0f} s" if waited_s is not None else ""
    return (f"{test}: the browser waited{spent} and did not see what the test expects ({first}){load}. "
            "If this machine is slow or busy the app may only have been late: rerun this module alone "
            f"(pytest -p no:cacheprovider {test.split('::')[0]}) or on a quieter machine; if it fails there too, "
            f"Playwright's report below says what the page showed instead.\n{str(exc)[:3000]}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    yield from _explain_timeouts(item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    yield from _explain_timeouts(item)


def _explain_timeouts(item):
    t0 = time.monotonic()
    outcome = yield
    exc = outcome.exception
    if exc is not None and item.get_closest_marker("browser") and _playwright_timeout(exc):
        outcome.force_exception(pytest.fail.Exception(
            slow_machine_message(item.nodeid, exc, time.monotonic() - t0), pytrace=False))


@pytest.fixture(scope="module")
def page(request, tmp_path_factory):
    pytest.importorskip("playwright")
    from panel.tests.util import serve_component
    from playwright.sync_api import sync_playwright

    from workbench import app

    make = getattr(request.module, "make_store", make_two_gpu_store)
    store = make(tmp_path_factory.mktemp(request.module.__name__.rpartition(".")[2]) / "db.sqlite")
    height = getattr(request.module, "VIEWPORT_HEIGHT", 1100)
    pn.state.cache.clear()
    build = getattr(request.module, "runner_build", None)
    if build is not None:  # the app's runner for this store (workbench.ui.runner.shared) with this builder
        from workbench.ui.jobs import BackgroundJobs
        from workbench.ui.runner import CACHE_KEY, SearchRunner

        pn.state.cache[(CACHE_KEY, str(store.path))] = {"runner": SearchRunner(store, build=build),
                                                        "jobs": BackgroundJobs()}
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
