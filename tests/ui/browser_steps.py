"""Browser steps shared by the UI tests (Playwright, Debian's Chromium)."""
from __future__ import annotations

import re

ACTIVE = re.compile(r"\bbk-active\b")


def open_in_inspector(page, row, attempts: int = 3, wait_ms: int = 20_000) -> None:
    """Click a candidate row of the Search or Dataset table until the Inspector tab is active.

    Tabulator replaces its row elements when new data arrives and when its virtual rows scroll;
    a click that lands while a row is being replaced reaches no cell and sends nothing to the
    server (seen on a loaded 2-core machine). So the row is scrolled into view, its candidate
    cell is clicked, and a click that opened nothing within `wait_ms` is repeated, at most
    `attempts` times in all; a table whose clicks never open the Inspector still fails here.
    """
    from playwright.sync_api import expect

    inspector = page.locator(".bk-tab", has_text="Inspector").first
    for attempt in range(attempts):
        row.scroll_into_view_if_needed()
        row.locator("[tabulator-field='candidate']").click()
        try:
            expect(inspector).to_have_class(ACTIVE, timeout=wait_ms)
            return
        except AssertionError:
            if attempt == attempts - 1:
                raise


def pick_problem(page, typed: str, option: str) -> None:
    """Type a fragment into the Search tab's Problem box and click the list entry that starts
    with `option` (what a user does; typed text alone is not a choice)."""
    from playwright.sync_api import expect

    box = page.locator(".wb-problem input").first
    box.click()
    box.fill("")
    box.type(typed, delay=60)
    item = page.locator(".bk-menu > div, .bk-menu .bk-item", has_text=option).first
    expect(item).to_be_visible(timeout=20_000)
    item.click()
