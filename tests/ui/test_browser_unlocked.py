"""Views that own a Bokeh ColumnDataSource stay correct when Panel runs a callback without the
Bokeh document lock.

Panel dispatches a widget event that arrives while the session is busy (for instance a table
click right after a tab click) as a coroutine scheduled *without* the document lock. Setting a
Bokeh model's property there raised `RuntimeError: _pending_writes should be non-None ...`, which
aborted the inspector's update (no lineage, no forecast bars, the Inspector tab not opened).
Here the same unlocked path is taken on purpose: the served page schedules a coroutine through
`pn.state.execute` (Panel's lock-free route for coroutines) that opens a candidate in the
inspector and moves the calibration view's threshold; the browser must then show the candidate's
lineage, receive the eight forecast bars, and show the coverage at the new threshold (the
threshold handler sets a Bokeh span before it writes that text).
"""
from __future__ import annotations

from pathlib import Path

import panel as pn
import pytest

from workbench.dataset import DEFAULT_SHIPPED_DIR

CHROMIUM = "/usr/bin/chromium"
THRESHOLD = 0.5

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium not installed (`make browser`)"),
    pytest.mark.skipif(not (DEFAULT_SHIPPED_DIR / "kernels.parquet").exists(), reason="no shipped data"),
]

#: Reads, in the browser, the bar heights of the ColumnDataSource with a `p` column.
BARS_JS = """() => {
  for (const doc of Bokeh.documents) {
    for (const m of doc.all_models) {
      const d = m.data;
      if (d === undefined || d === null) continue;
      const p = (d instanceof Map) ? d.get('p') : d['p'];
      if (p !== undefined) return Array.from(p);
    }
  }
  return null;
}"""


@pytest.fixture
def served(tmp_path):
    pytest.importorskip("playwright")
    from playwright.sync_api import sync_playwright
    from panel.tests.util import serve_component

    from workbench.dataset import load_into_store
    from workbench.forecast.roofline import RooflineForecaster
    from workbench.problems import list_problems
    from workbench.records import Hardware
    from workbench.store import Store
    from workbench.ui.calibration_view import CalibrationView, calibration_info
    from workbench.ui.inspector import CandidateInspector

    store = Store(tmp_path / "db.sqlite")
    store.put_problems(list_problems())
    load_into_store(DEFAULT_SHIPPED_DIR, store)
    m = next(m for m in store.measurements(hardware_key="h100")
             if m.ok and store.get_candidate(m.candidate_id).parent_id)
    cand = store.get_candidate(m.candidate_id)
    ms = [x for x in store.measurements(hardware_key="h100") if x.ok][:200]
    fc = RooflineForecaster()
    forecasts = [fc.forecast(store.get_problem(x.problem_id), store.get_candidate(x.candidate_id),
                             x.hardware or Hardware(key="h100", name="h100")) for x in ms]
    if m not in ms:
        forecasts.append(fc.forecast(store.get_problem(m.problem_id), cand,
                                     m.hardware or Hardware(key="h100", name="h100")))
    store.put_forecasts(forecasts)
    info = calibration_info(forecasts, ms)
    expected_coverage = f"{float((info.confidence >= THRESHOLD).mean()):.3f}"
    assert expected_coverage != "1.000"  # the threshold must change what the page shows

    def app():
        inspector = CandidateInspector(store)
        calib = CalibrationView(info, threshold=0.0)

        async def act():
            inspector.hardware_key = "h100"
            inspector.candidate_id = cand.id
            calib.threshold = THRESHOLD

        pn.state.onload(lambda: pn.state.execute(act))
        return pn.Column(inspector, calib)

    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=[
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            page = browser.new_page()
            page.set_default_timeout(60_000)
            serve_component(page, app)
            yield page, cand, expected_coverage
            browser.close()
    finally:
        pn.state.kill_all_servers()


def test_views_update_from_a_callback_without_the_document_lock(served):
    from playwright.sync_api import expect

    page, cand, expected_coverage = served
    page.wait_for_selector(f"text=Candidate {cand.id}")
    page.wait_for_selector("text=lineage")
    page.wait_for_function(f"({BARS_JS})() !== null && ({BARS_JS})().length === 8")
    bars = page.evaluate(BARS_JS)
    assert abs(sum(bars) - 1.0) < 1e-6
    expect(page.locator(".wb-coverage")).to_have_text(expected_coverage)
