"""Language models chosen in the app, in a real browser (Debian's Chromium through Playwright),
against a real llama.cpp server serving the shipped SmolLM2-135M model (the `llm_server`
fixture of tests/conftest.py).

The endpoint is typed into the Language model settings; "Check" lists the served model. A
replay search of H200 with the LLM forecaster and the LLM-guided generator then runs from the
page: the model chooses the edits of each child and forecasts every candidate. Opening a child in
the Inspector must show the generator's raw answer and the forecaster's reasoning, each with
tokens and seconds. An endpoint that cannot be reached fails a Start with a message, no traceback.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser_steps import open_in_inspector

from workbench.dataset import DEFAULT_SHIPPED_DIR

CHROMIUM = "/usr/bin/chromium"
LONG_MS = 420_000

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium not installed (`make browser`)"),
    pytest.mark.skipif(not (DEFAULT_SHIPPED_DIR / "kernels.parquet").exists(), reason="no shipped data"),
]


#: Page height in pixels for the shared `page` fixture (tests/ui/conftest.py).
VIEWPORT_HEIGHT = 1200


def expect(locator):
    from playwright.sync_api import expect as _expect

    return _expect(locator)


def status(page):
    return page.locator(".wb-search-status p").first


def status_text(page) -> str:
    return "\n".join(page.locator(".wb-search-status p").all_inner_texts())


def _settings(page, url: str, model: str) -> None:
    card = page.locator(".wb-llm-card").first
    if not page.locator(".wb-llm-url input").first.is_visible():
        card.locator(".card-header, .card-button").first.click()
    page.locator(".wb-llm-url input").first.fill(url)
    page.locator(".wb-llm-url input").first.press("Enter")
    page.locator(".wb-llm-model input").first.fill(model)
    page.locator(".wb-llm-model input").first.press("Enter")


def _choose(page, forecaster: str, generator: str, method: str, budget: int) -> None:
    page.get_by_label("GPU").first.select_option(label="REPLAY of H200 (recorded measurements)")
    page.get_by_label("Forecaster").first.select_option(forecaster)
    page.get_by_label("Generator").first.select_option(generator)
    page.get_by_label("Method").first.select_option(method)
    box = page.get_by_label("Budget (GPU measurements)").first
    box.fill(str(budget))
    box.press("Enter")


def test_unreachable_endpoint_fails_the_start_with_a_message(page, free_port):
    _settings(page, f"http://127.0.0.1:{free_port}/v1", "smollm2-135m")
    _choose(page, "llm", "llm-guided", "measure_all", 3)
    page.get_by_role("button", name="Start").click()
    expect(status(page)).to_contain_text("search failed", timeout=120_000)
    expect(status(page)).to_contain_text("cannot reach")
    assert "Traceback" not in status_text(page)


def test_llm_forecaster_and_generator_write_candidates_and_reasoning(page, llm_server):
    _settings(page, llm_server.base_url, llm_server.model)
    page.locator(".wb-llm-check button, button:has-text('Check')").first.click()
    expect(page.locator(".wb-llm-status")).to_contain_text("endpoint reached", timeout=60_000)
    expect(page.locator(".wb-llm-status")).to_contain_text(llm_server.model)
    _choose(page, "llm", "llm-guided", "measure_all", 3)
    page.get_by_role("button", name="Start").click()
    expect(status(page)).to_contain_text("finished", timeout=LONG_MS)
    expect(page.locator(".wb-search-status p", has_text="language model")).to_be_visible()
    text = status_text(page)
    assert re.search(r"language model: [1-9]\d* children written, [1-9]\d* forecasts", text), text
    child = page.locator(".wb-candidates .tabulator-row", has_text="llm-guided:").first
    open_in_inspector(page, child)
    expect(page.locator(".wb-generation p").first).to_contain_text("Generator answer")
    expect(page.locator(".wb-generation p").first).to_contain_text("tokens")
    assert page.locator(".wb-generation-text").inner_text().strip()
    reasoning = page.locator(".wb-reasoning p").first
    expect(reasoning).to_contain_text("Forecaster llm:")
    expect(reasoning).to_contain_text("completion tokens")
    assert page.locator(".wb-reasoning-text").inner_text().strip()
