"""The app in a real browser: Debian's Chromium driven by Python Playwright.

The app (`workbench.app.build`) is served in-process with `panel.tests.util.serve_component`
over a fresh database holding the shipped H100/H200 measurements, plus roofline forecasts of
300 H100 measurements computed here as a test fixture (the real roofline forecaster, so the
Calibration tab has something to show without the minute-long held-out computation). Then: the
page loads with no GPU and says REPLAY; a replay search starts and candidates appear; moving the
threshold slider changes the coverage and risk text; opening a candidate shows its diff and
reasoning; a second Start with the same settings begins within 5 s (the fitted forecaster comes
from the fit cache); the Compare tab compares four methods on a stored landscape. Screenshots of
each view go to the test's temporary directory; `make screenshots` runs
this module with WORKBENCH_SCREENSHOTS_DIR=benchmarks/results/screenshots to regenerate the README's.
"""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import panel as pn
import pytest
from browser_steps import open_in_inspector

from workbench.dataset import DEFAULT_SHIPPED_DIR

CHROMIUM = "/usr/bin/chromium"
#: Where `make screenshots` wants the README screenshots ("" in an ordinary test run).
SCREENSHOTS = os.environ.get("WORKBENCH_SCREENSHOTS_DIR", "")
LONG_MS = 240_000

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium not installed (`make browser`)"),
    pytest.mark.skipif(not (DEFAULT_SHIPPED_DIR / "kernels.parquet").exists(), reason="no shipped data"),
]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    from workbench.dataset import load_into_store
    from workbench.forecast.roofline import RooflineForecaster
    from workbench.problems import list_problems
    from workbench.records import Hardware
    from workbench.store import Store

    s = Store(tmp_path_factory.mktemp("browser") / "db.sqlite")
    s.put_problems(list_problems())
    load_into_store(DEFAULT_SHIPPED_DIR, s)
    ms = [m for m in s.measurements(hardware_key="h100") if m.ok][:300]
    fc = RooflineForecaster()
    s.put_forecasts([fc.forecast(s.get_problem(m.problem_id), s.get_candidate(m.candidate_id),
                                 m.hardware or Hardware(key="h100", name="h100")) for m in ms])
    return s


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


@pytest.fixture(scope="module")
def page(store):
    pytest.importorskip("playwright")
    from playwright.sync_api import sync_playwright
    from panel.tests.util import serve_component

    from workbench import app

    pn.state.cache.clear()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=[
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            pg = browser.new_page(viewport={"width": 1500, "height": 1000})
            pg.set_default_timeout(60_000)
            serve_component(pg, lambda: app.build(store), address="127.0.0.1")
            pg.wait_for_selector("text=REPLAY MODE", timeout=LONG_MS)
            yield pg
            browser.close()
    finally:
        pn.state.kill_all_servers()
        pn.state.cache.clear()


def tab(page, name: str):
    """A Bokeh tab header (a div, not an ARIA tab)."""
    return page.locator(".bk-tab", has_text=name).first


def expect(locator):
    from playwright.sync_api import expect as _expect

    return _expect(locator)


def _shot(page, artifacts: Path, view: str) -> None:
    path = artifacts / f"{view}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 0
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(SCREENSHOTS) / f"{view}.png")


def test_app_loads_without_gpu_and_says_replay(page):
    banner = page.locator(".wb-banner p").first.inner_text()  # Panel renders inside a shadow root
    assert "REPLAY MODE" in banner and "H100" in banner
    for name in ("Search", "Calibration", "Dataset", "Inspector"):
        expect(tab(page, name)).to_be_visible()


def test_replay_search_shows_candidates(page, artifacts):
    # The default forecaster (learned) is fitted in the background on the other problems first.
    assert page.get_by_label("Forecaster").first.input_value() == "learned"
    page.get_by_role("button", name="Start").click()
    expect(page.locator(".wb-search-status p").first).to_contain_text("REPLAY", timeout=LONG_MS)
    page.wait_for_selector(".wb-candidates .tabulator-row", timeout=LONG_MS)
    expect(page.locator(".wb-search-status p").first).to_contain_text("finished", timeout=LONG_MS)
    rows = page.locator(".wb-candidates .tabulator-row")
    assert rows.count() >= 8  # budget 8 GPU measurements, each a row
    assert page.locator(".wb-candidates").get_by_text("measured").count() >= 1
    _shot(page, artifacts, "search")


def test_second_start_with_the_same_settings_begins_within_5_s(page):
    """The learned forecaster fitted by the first Start is loaded from the fit cache."""
    import time

    first = page.locator(".wb-search-status p").first.inner_text()
    old_id = re.search(r"search (\S+) of", first).group(1)
    t0 = time.perf_counter()
    page.get_by_role("button", name="Start").click()
    new_search = re.compile(r"search (?!" + re.escape(old_id) + r"\b)\S+ of")
    expect(page.locator(".wb-search-status p").first).to_have_text(new_search, timeout=30_000)
    began_s = time.perf_counter() - t0
    assert began_s < 5.0, f"the second Start began after {began_s:.1f} s"
    expect(page.locator(".wb-search-status p").first).to_contain_text("finished", timeout=LONG_MS)


def test_threshold_slider_changes_coverage_and_risk(page, artifacts):
    tab(page, "Calibration").click()
    expect(page.locator(".wb-coverage")).to_be_visible()
    handle = page.locator(".noUi-handle").first
    base = page.locator(".noUi-base").first.bounding_box()
    y = base["y"] + base["height"] / 2

    def drag_to(fraction: float) -> None:
        box = handle.bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.down()
        page.mouse.move(base["x"] + fraction * base["width"], y, steps=8)
        page.mouse.up()

    drag_to(0.0)
    expect(page.locator(".wb-coverage")).to_have_text("1.000")
    low_risk = page.locator(".wb-risk").inner_text()
    drag_to(0.97)
    expect(page.locator(".wb-coverage")).not_to_have_text("1.000")
    coverage, risk = page.locator(".wb-coverage").inner_text(), page.locator(".wb-risk").inner_text()
    assert float(coverage) < 1.0
    assert risk != low_risk
    _shot(page, artifacts, "calibration")


def test_candidate_opens_with_diff_and_reasoning(page, artifacts):
    tab(page, "Search").click()
    # a mutated child (seeds are zoo kernels with no parent); which row is last depends on the run
    row = page.locator(".wb-candidates .tabulator-row").filter(
        has=page.locator("[tabulator-field='origin']", has_text="mutation:")).last
    cid = row.locator("[tabulator-field='candidate']").inner_text().strip()
    assert len(cid) >= 8
    # That row by its id: a locator is looked up again at each use, and "the last mutated row"
    # may be another one once the table has re-rendered.
    row = page.locator(".wb-candidates .tabulator-row").filter(
        has=page.locator("[tabulator-field='candidate']", has_text=cid))
    open_in_inspector(page, row)
    # the clicked child's diff against its parent: both named, changed hunks shown (with three
    # lines of context, so which source lines appear depends on the mutation)
    diff = page.locator(".wb-diff").first
    expect(diff).to_contain_text(f"candidate {cid[:16]}")
    expect(diff).to_contain_text("parent ")
    expect(page.locator(".wb-reasoning p").first).to_contain_text("Forecaster")
    _shot(page, artifacts, "inspector")


def test_compare_view(page, artifacts):
    """The Compare tab on the first stored landscape it offers (roofline: nothing to fit)."""
    from workbench.ui.compare import landscape_problems

    if not landscape_problems().get("h200"):
        pytest.skip("no H200 landscape stored")
    tab(page, "Compare").click()
    label = next(x for x in page.locator(".wb-compare-problem option").all_inner_texts()
                 if x.startswith("L1/12_layer_norm · landscape on H200"))
    page.locator(".wb-compare-problem select").first.select_option(label=label)
    page.locator(".wb-compare-forecaster select").first.select_option("roofline")
    page.get_by_role("button", name="Compare").click()
    expect(page.locator(".wb-compare-status p").first).to_contain_text("comparison done", timeout=LONG_MS)
    expect(page.locator(".wb-compare-row")).to_have_count(4)
    _shot(page, artifacts, "compare")


def test_dataset_view(page, artifacts):
    tab(page, "Dataset").click()
    expect(page.get_by_text("measurements shown")).to_be_visible()
    _shot(page, artifacts, "dataset")
