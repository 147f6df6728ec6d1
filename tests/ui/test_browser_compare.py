"""The Compare tab in a real browser (Debian's Chromium through Playwright): on the stored H200
landscape of L1/12_layer_norm, four methods at an equal budget draw one curve each, beside the
landscape's global best, and the table says what each found and the measurements it saved."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from workbench.ui.compare import landscape_problems

CHROMIUM = "/usr/bin/chromium"
PROBLEM = "L1/12_layer_norm"
METHODS = ["measure_all", "screen_topk", "screen_topk[random]", "ranked_order"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium not installed (`make browser`)"),
    pytest.mark.skipif(PROBLEM not in landscape_problems().get("h200", {}), reason="no H200 landscape stored"),
]


def expect(locator):
    from playwright.sync_api import expect as _expect

    return _expect(locator)


def legend(page) -> list[tuple[str, bool]]:
    """(label, visible) of every legend item of the Compare chart, as the browser holds them."""
    return page.evaluate("""() => {
      const out = [];
      for (const doc of Bokeh.documents) {
        for (const m of doc.all_models) {
          if (m.type !== "Legend") continue;
          const items = m.items.map((it) => [String(it.label && (it.label.value ?? it.label)), !!it.visible]);
          const ours = items.some(([label]) => label.startsWith("global best") || label.startsWith("method "));
          if (ours) out.push(...items);
        }
      }
      return out; }""")


def test_compare_on_a_landscape_draws_each_method_and_the_global_best(page):
    page.locator(".bk-tab", has_text="Compare").first.click()
    page.locator(".wb-compare-problem select").first.select_option(
        label=next(label for label in page.locator(".wb-compare-problem option").all_inner_texts()
                   if label.startswith(f"{PROBLEM} · landscape on H200")))
    page.locator(".wb-compare-gpu select").first.select_option(label="REPLAY of H200 (recorded measurements)")
    page.locator(".wb-compare-forecaster select").first.select_option("roofline")
    budget = page.locator(".wb-compare-budget input").first
    budget.fill("16")
    budget.press("Enter")
    page.get_by_role("button", name="Compare").click()
    expect(page.locator(".wb-compare-status p").first).to_contain_text("comparison done", timeout=300_000)
    summary = page.locator(".wb-compare-summary").first
    expect(summary).to_contain_text("landscape of")
    best = float(re.search(r"global best ([0-9.]+)x", summary.inner_text()).group(1))
    assert best > 0
    rows = page.locator(".wb-compare-row")
    expect(rows).to_have_count(4)
    assert [r.locator("td").first.inner_text() for r in rows.all()] == METHODS
    items = dict(legend(page))
    for m in METHODS:
        assert items.get(m) is True, items
    assert any(label.startswith("global best") and shown for label, shown in items.items()), items
    assert not any(label.startswith("method ") and shown for label, shown in items.items())  # unused lines hidden
    for r in rows.all():  # the best any method found is at most the landscape's global best
        cell = r.locator("td").nth(1).inner_text()
        assert cell == "-" or float(cell.rstrip("x")) <= best + 1e-3
