"""The Search tab's form and controls in a real browser (Debian's Chromium through Playwright),
each test the case a first-time user hit (issue 50):

- picking "L1/12_layer_norm · level 1 · ..." from the list after typing `layer` starts that
  problem (it once read only the typed fragment: "unknown problem 'layer'");
- an empty Problem box is refused with a message (it once re-ran the previous problem);
- the Budget box refuses 2.5 and 1e9 with a message (they once ran as 25 and 19);
- the chart's x-axis spans the GPU measurements spent (it once ended at the last improvement);
- while a new search prepares, the chart and table are empty (they once kept the previous
  search, and a click showed the new search's GPU data);
- Stop acts within 5 s in the middle of a slow step and in the middle of a slow preparation,
  with a visible "stopping" state;
- `selective` says on the page why it trusted nothing;
- an abstained forecast reads "abstained" with no confidence in the table and in the Inspector;
- a failed generation's answer is shown, escaped (model text is hostile);
- the Inspector's log section says one consistent thing;
- the LLM card's Check reports HTTP 404 / 501 as errors without holding up the page, and a Start
  against such an endpoint says what to fix;
- the Searches tab lists past searches, reopens one and exports its tables.

The store (search_fixtures.make_search_store) holds the real shipped kernels of layer norm and
softmax; a few budgets, chosen only here, build a search with a deliberately slow, abstaining
or failing part (search_fixtures.fixture_build).
"""
from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from browser_steps import open_in_inspector, pick_problem
from search_fixtures import (ABSTAIN, FAILING_ANSWERS, FOREIGN_ONLY_ID, HOSTILE_ANSWER, SLOW_PREPARE, SLOW_STEP,
                             make_search_store, fixture_build)

from workbench.dataset import DEFAULT_SHIPPED_DIR

CHROMIUM = "/usr/bin/chromium"
LONG_MS = 180_000
VIEWPORT_HEIGHT = 1300

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium not installed (`make browser`)"),
    pytest.mark.skipif(not (DEFAULT_SHIPPED_DIR / "kernels.parquet").exists(), reason="no shipped data"),
]

make_store = make_search_store  # read by the `page` fixture (conftest.py)
runner_build = fixture_build


def expect(locator):
    from playwright.sync_api import expect as _expect

    return _expect(locator)


def tab(page, name: str):
    return page.locator(".bk-tab", has_text=name).first


def status(page):
    """The status line's first paragraph (the search, its phase and counts, or a refusal)."""
    return page.locator(".wb-search-status p").first


def status_text(page) -> str:
    return "\n".join(page.locator(".wb-search-status p").all_inner_texts())


def rows(page):
    return page.locator(".wb-candidates .tabulator-row")


def choose(page, forecaster: str = "roofline", method: str = "screen_topk", budget: str = "8",
           gpu: str = "REPLAY of H100 (recorded measurements)") -> None:
    page.get_by_label("GPU").first.select_option(label=gpu)
    page.get_by_label("Forecaster").first.select_option(forecaster)
    page.get_by_label("Method").first.select_option(method)
    box = page.get_by_label("Budget (GPU measurements)").first
    box.fill(budget)
    box.press("Enter")


def start(page) -> None:
    page.get_by_role("button", name="Start").click()


def shown_search(page) -> str:
    m = re.search(r"search (\S+) of", status_text(page))
    return m.group(1) if m else ""


def start_new(page, then: str = "finished", timeout_ms: int = LONG_MS) -> str:
    """Press Start and wait until the status shows a search other than the one shown before, in
    a phase containing `then`; returns its id."""
    old = shown_search(page)
    start(page)
    pattern = re.compile(r"search (?!" + re.escape(old) + r"\b)\S+ of .*" + re.escape(then)) if old else \
        re.compile(r"search \S+ of .*" + re.escape(then))
    expect(status(page)).to_have_text(pattern, timeout=timeout_ms)
    return shown_search(page)


def plot_x_end(page, title_start: str) -> float:
    """The x-axis end of the Bokeh plot whose title starts with `title_start`, as the browser drew it."""
    return page.evaluate("""(title) => {
      for (const doc of Bokeh.documents) {
        for (const m of doc.all_models) {
          if (m.type === "Plot" || (m.title && m.x_range && m.renderers)) {
            const t = m.title && m.title.text;
            if (t && t.startsWith(title)) return m.x_range.end;
          }
        }
      }
      return null; }""", title_start)


def test_picking_from_the_list_starts_that_problem(page):
    choose(page, budget="12")
    pick_problem(page, "layer", "L1/12_layer_norm · level 1")
    start(page)
    expect(status(page)).to_contain_text("of L1/12_layer_norm", timeout=LONG_MS)
    assert "unknown problem" not in status_text(page)
    expect(status(page)).to_contain_text("finished", timeout=LONG_MS)
    expect(status(page)).to_contain_text("12 / 12 GPU measurements")


def test_the_chart_spans_the_measurements_spent(page):
    spent = int(re.search(r"(\d+) / \d+ GPU measurements", status_text(page)).group(1))
    deadline = time.monotonic() + 20
    end = None
    while time.monotonic() < deadline:
        end = plot_x_end(page, "Best measured speedup")
        if end is not None and end >= spent:
            break
        page.wait_for_timeout(300)
    assert end is not None and end >= spent, f"the x-axis ends at {end}, {spent} measurements were spent"


def test_an_empty_problem_box_is_refused(page):
    before = status_text(page)
    sid = re.search(r"search (\S+) of", before).group(1)
    box = page.locator(".wb-problem input").first
    box.click()
    box.fill("")
    box.press("Enter")
    start(page)
    expect(status(page)).to_contain_text("cannot start", timeout=20_000)
    expect(status(page)).to_contain_text("Problem box is empty")
    page.wait_for_timeout(2000)  # a search started anyway would replace the message within two polls
    assert "preparing" not in status_text(page) and sid not in status_text(page)
    pick_problem(page, "layer", "L1/12_layer_norm · level 1")


@pytest.mark.parametrize("typed", ["2.5", "1e9"])
def test_the_budget_box_refuses_what_is_not_a_whole_number(page, typed):
    choose(page, budget=typed)
    start(page)
    expect(status(page)).to_contain_text("cannot start", timeout=20_000)
    expect(status(page)).to_contain_text(f"Budget '{typed}' is not a whole number")
    page.wait_for_timeout(1500)
    assert "preparing" not in status_text(page)


def test_no_stale_rows_while_a_search_prepares_and_stop_cancels_it_at_once(page):
    choose(page, budget="12")
    start_new(page)
    expect(rows(page)).not_to_have_count(0)
    choose(page, budget=str(SLOW_PREPARE))
    start(page)
    expect(status(page)).to_contain_text("preparing", timeout=30_000)
    expect(rows(page)).to_have_count(0, timeout=10_000)  # not the finished search's rows
    page.wait_for_timeout(1500)
    assert rows(page).count() == 0 and "preparing" in status_text(page)
    t0 = time.monotonic()
    page.get_by_role("button", name="Stop").click()
    expect(status(page)).to_contain_text("stopped", timeout=10_000)
    assert time.monotonic() - t0 < 5.0, f"Stop while preparing took {time.monotonic() - t0:.1f} s"


def test_stop_acts_within_5_s_during_a_slow_step(page):
    choose(page, budget=str(SLOW_STEP))
    start_new(page, then="running")  # inside the slow forecast of step 0
    page.wait_for_timeout(1500)
    t0 = time.monotonic()
    page.get_by_role("button", name="Stop").click()
    seen_stopping = False
    while time.monotonic() - t0 < 10:
        text = status_text(page)
        seen_stopping |= "stopping" in text
        if re.search(r"\bstopped\b", text):
            break
        page.wait_for_timeout(50)
    took = time.monotonic() - t0
    assert re.search(r"\bstopped\b", status_text(page)), status_text(page)
    assert took < 5.0, f"Stop took {took:.1f} s during a step of a forecaster that takes 90 s"
    assert seen_stopping or took < 1.0  # "stopping" shows unless the stop was quicker than a redraw
    start_new(page, then="running", timeout_ms=60_000)  # the runner is free again at once
    assert "already in progress" not in status_text(page)
    page.get_by_role("button", name="Stop").click()
    expect(status(page)).to_contain_text("stopped", timeout=10_000)


def test_selective_says_why_it_trusted_nothing(page):
    choose(page, method="selective", budget="8")
    start_new(page)
    note = page.locator(".wb-trust-note").first
    expect(note).to_contain_text("selective trusted no forecast", timeout=20_000)
    expect(note).to_contain_text("not calibrated yet")


def test_an_abstention_reads_the_same_in_the_table_and_the_inspector(page):
    choose(page, method="measure_all", budget=str(ABSTAIN))
    start_new(page)
    row = rows(page).filter(has=page.locator("[tabulator-field='forecast_bin']", has_text="abstained")).first
    expect(row).to_be_visible()
    assert row.locator("[tabulator-field='confidence']").inner_text().strip() == "-"
    open_in_inspector(page, row)
    reasoning = page.locator(".wb-reasoning p").first
    expect(reasoning).to_contain_text("abstained")
    expect(reasoning).to_contain_text("no confidence")
    assert not re.search(r"confidence \d", reasoning.inner_text())
    assert "<script>" in page.locator(".wb-reasoning-text").inner_text()  # the reason, shown literally
    assert page.title() != "pwned"
    tab(page, "Search").click()


def test_a_failed_generation_shows_the_models_answer_escaped(page):
    choose(page, method="measure_all", budget=str(FAILING_ANSWERS))
    start_new(page)
    answer = page.locator(".wb-failed-answer").first
    expect(answer).to_be_visible(timeout=20_000)
    assert answer.inner_text().strip() == HOSTILE_ANSWER
    assert page.locator(".wb-failed img").count() == 0 and page.title() != "pwned"
    expect(page.locator(".wb-failed")).to_contain_text("failed generation")


def test_the_inspectors_log_section_is_consistent(page):
    cid = FOREIGN_ONLY_ID["id"]
    tab(page, "Dataset").click()
    row = page.locator(".tabulator-row", has_text=cid[:12]).first
    if not row.count():  # not on the first page of the table: filter to its problem and GPU
        page.locator(".wb-dataset-problem select").first.select_option("L1/01_softmax")
        page.locator(".wb-dataset-gpu select").first.select_option("h100")
        row = page.locator(".tabulator-row", has_text=cid[:12]).first
    open_in_inspector(page, row)
    notes = page.locator(".wb-log-note")
    expect(notes.first).to_contain_text("Nothing to show")
    expect(notes.first).to_contain_text("only other candidates' output")
    assert notes.count() == 1 and page.locator(".wb-log-text").count() == 0
    tab(page, "Search").click()


def _llm_card(page, url: str, model: str = "m") -> None:
    if not page.locator(".wb-llm-url input").first.is_visible():
        page.locator(".wb-llm-card").first.locator(".card-header, .card-button").first.click()
    page.locator(".wb-llm-url input").first.fill(url)
    page.locator(".wb-llm-url input").first.press("Enter")
    page.locator(".wb-llm-model input").first.fill(model)
    page.locator(".wb-llm-model input").first.press("Enter")


@pytest.mark.parametrize("code", [404, 501])
def test_check_reports_an_http_error_without_holding_up_the_page(page, code):
    from test_llm_settings import _StatusServer

    with _StatusServer(code, delay_s=6.0) as url:
        _llm_card(page, url)
        page.locator(".wb-llm-check button, button:has-text('Check')").first.click()
        expect(page.locator(".wb-llm-status")).to_contain_text("asking", timeout=5_000)
        # The server answers other events meanwhile: the Local model card appears at once.
        page.get_by_label("Forecaster").first.select_option("local")
        expect(page.locator(".wb-local-card").first).to_be_visible(timeout=3_000)
        page.get_by_label("Forecaster").first.select_option("roofline")
        expect(page.locator(".wb-llm-status")).to_contain_text(f"HTTP {code}", timeout=30_000)
        expect(page.locator(".wb-llm-status")).to_contain_text("LLM endpoint error")
        assert "endpoint reached" not in page.locator(".wb-llm-status").inner_text()


def test_a_start_against_a_404_endpoint_says_what_to_fix(page):
    from test_llm_settings import _StatusServer

    with _StatusServer(404) as url:
        _llm_card(page, url)
        choose(page, forecaster="llm", method="screen_topk", budget="4")
        start(page)
        expect(status(page)).to_contain_text("search failed", timeout=60_000)
        text = status_text(page)
        assert "HTTP 404" in text and "/v1" in text and "NotFoundError" not in text
    page.get_by_label("Forecaster").first.select_option("roofline")


def test_past_searches_are_listed_reopened_and_exported(page, tmp_path):
    tab(page, "Searches").click()
    table = page.locator(".wb-searches .tabulator-row")
    expect(table.first).to_be_visible(timeout=30_000)
    first = table.filter(has_text="L1/12_layer_norm").filter(has_text="finished").filter(
        has=page.locator("[tabulator-field='budget']", has_text=re.compile(r"^\s*12\s*$"))).first
    sid = first.locator("[tabulator-field='search']").inner_text().strip()
    first.locator("[tabulator-field='search']").click()
    expect(page.locator(".wb-searches-info")).to_contain_text(sid, timeout=20_000)
    with page.expect_download(timeout=60_000) as dl:
        page.locator(".wb-export-candidates-csv button, .wb-export-candidates-csv a").first.click()
    path = tmp_path / "candidates.csv"
    dl.value.save_as(path)
    head = path.read_text().splitlines()[0]
    assert "id" in head and "decision" in head and "source" in head
    with page.expect_download(timeout=60_000) as dl:
        page.locator(".wb-export-measurements-parquet button, .wb-export-measurements-parquet a").first.click()
    pq_path = tmp_path / "m.parquet"
    dl.value.save_as(pq_path)
    import pandas as pd

    df = pd.read_parquet(pq_path)
    assert len(df) == 12 and set(df["search_id"]) == {sid}
    page.get_by_role("button", name="Open in the Search tab").click()
    expect(status(page)).to_contain_text(f"past search {sid}", timeout=20_000)
    expect(rows(page).first).to_be_visible()
