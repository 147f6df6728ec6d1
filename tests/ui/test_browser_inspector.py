"""The Inspector and the search controls in a real browser (Debian's Chromium through Playwright).

The app is served over a small store of real shipped softmax kernels measured on H100 and H200
(inspector_fixtures: each log names its candidate and GPU; the H200 logs carry a neighbour's
section first, as older executors recorded them). A replay search of H200 with the roofline
forecaster runs from the page; opening a measured row must show that candidate's own H200 log,
H200 labels on the forecast and the measurement, and "replayed in this run"; opening a row the
search did not measure must say the numbers are recorded. Typing a problem that does not exist
and pressing Start must be refused with a message, starting nothing.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser_steps import open_in_inspector, pick_problem
from inspector_fixtures import PROBLEM, own_line

from workbench.dataset import DEFAULT_SHIPPED_DIR

CHROMIUM = "/usr/bin/chromium"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium not installed (`make browser`)"),
    pytest.mark.skipif(not (DEFAULT_SHIPPED_DIR / "kernels.parquet").exists(), reason="no shipped data"),
]


def expect(locator):
    from playwright.sync_api import expect as _expect

    return _expect(locator)


def tab(page, name: str):
    return page.locator(".bk-tab", has_text=name).first


def status(page):
    return page.locator(".wb-search-status p").first


def test_unknown_problem_is_refused_with_a_message(page):
    box = page.locator(".wb-problem input").first
    box.fill("no_such_problem")
    page.get_by_role("button", name="Start").click()
    expect(status(page)).to_contain_text("cannot start", timeout=20_000)
    expect(status(page)).to_contain_text("unknown problem 'no_such_problem'")
    page.wait_for_timeout(1500)  # a started search would replace the message within two polls
    assert page.locator(".wb-candidates .tabulator-row").count() == 0
    assert "preparing" not in status(page).inner_text()
    pick_problem(page, "softmax", PROBLEM)  # a refused box keeps nothing: choose again


def test_inspector_shows_the_h200_rows_own_log_label_and_provenance(page):
    page.get_by_label("GPU").first.select_option(label="REPLAY of H200 (recorded measurements)")
    page.get_by_label("Forecaster").first.select_option("roofline")
    budget = page.get_by_label("Budget (GPU measurements)").first
    budget.fill("3")
    budget.press("Enter")
    page.get_by_role("button", name="Start").click()
    expect(status(page)).to_contain_text("finished", timeout=120_000)
    expect(status(page)).to_contain_text("3 / 3 GPU measurements")
    assert PROBLEM in status(page).inner_text()
    measured = page.locator(".wb-candidates .tabulator-row", has_text="measured").last
    cid = measured.locator("[tabulator-field=candidate]").inner_text().strip()
    open_in_inspector(page, measured)
    expect(page.locator(".wb-provenance")).to_contain_text("replayed in this run")
    expect(page.locator(".wb-provenance")).to_contain_text("recorded on H200")
    expect(page.locator(".wb-log-text")).to_have_text(re.compile(re.escape(own_line(cid, "h200"))))
    assert "h100" not in page.locator(".wb-log-text").inner_text()
    expect(page.locator(".wb-log-note").first).to_contain_text("other candidates' output")
    expect(page.locator(".wb-chart-label")).to_contain_text("Forecast for H200")
    expect(page.locator(".wb-reasoning p").first).to_contain_text("for H200")
    expect(page.locator(".wb-details")).to_contain_text("on H200")

    tab(page, "Search").click()
    unmeasured = page.locator(".wb-candidates .tabulator-row", has_text="forecast").first
    other = unmeasured.locator("[tabulator-field=candidate]").inner_text().strip()
    open_in_inspector(page, unmeasured)
    expect(page.locator(".wb-provenance")).to_contain_text("recorded on H200")
    expect(page.locator(".wb-provenance")).to_contain_text("this search did not measure it")
    expect(page.locator(".wb-log-text")).to_have_text(re.compile(re.escape(own_line(other, "h200"))))
