"""Text that candidates and models wrote reaches the app's views only escaped, never as HTML or
Markdown (the browser-level check is in test_browser_hostile.py)."""
from __future__ import annotations

import html

import panel as pn

from hostile_fixtures import HOSTILE_ID, OUTSIDE_IMAGE, PAYLOAD, hostile_store  # noqa: F401 (fixture)
from workbench.errors import WorkbenchError
from workbench.records import Forecast, Measurement, Status
from workbench.ui.calibration_page import CalibrationPage
from workbench.ui.inspector import CandidateInspector, side_by_side_diff
from workbench.ui.runner import SearchRunner
from workbench.ui.safe import code, esc, pre
from workbench.ui.search_view import SearchView

ESCAPED = html.escape(PAYLOAD, quote=True)


def _assert_inert(text: str) -> None:
    assert "<script" not in text and "<img" not in text, text


def test_helpers_escape_markup_and_quotes():
    assert esc(PAYLOAD) == ESCAPED and "<" not in esc(PAYLOAD) and '"' not in esc(PAYLOAD)
    assert code(PAYLOAD) == f"<code>{ESCAPED}</code>"
    assert ESCAPED in pre(PAYLOAD) and "<script" not in pre(PAYLOAD)
    assert esc(None) == ""


def test_inspector_shows_every_candidate_and_model_text_escaped(hostile_store):
    insp = CandidateInspector(hostile_store, hardware_key="h100", candidate_id=HOSTILE_ID)
    panes = {"title": insp.title, "lineage": insp.lineage, "details": insp.details,
             "reasoning": insp.reasoning, "log": insp.log, "diff": insp.diff}
    for name, pane in panes.items():
        assert isinstance(pane, pn.pane.HTML) and not isinstance(pane, pn.pane.Markdown), name
        _assert_inert(pane.object)
    for name in ("title", "details", "reasoning", "log"):  # each of these shows the payload literally
        assert ESCAPED in panes[name].object, name
    assert html.escape(OUTSIDE_IMAGE) in insp.reasoning.object  # shown as text: nothing is fetched
    # The only Markdown panes left in the inspector are fixed headings.
    for md in insp.__panel__().select(pn.pane.Markdown):
        assert "pwned" not in md.object and HOSTILE_ID not in md.object


def test_diff_labels_are_escaped():
    out = side_by_side_diff("a = 1\n", f"a = 2  # {PAYLOAD}\n", parent_label=PAYLOAD, label=PAYLOAD)
    _assert_inert(out.split("</style>", 1)[1])


def test_a_seed_candidate_is_named_escaped_with_its_source():
    out = side_by_side_diff(None, f"x = 1  # {PAYLOAD}\n", label=f"candidate {PAYLOAD}")
    _assert_inert(out)
    assert f"candidate {ESCAPED}" in out and "no parent" in out and f"x = 1  # {ESCAPED}" in out


def test_search_status_escapes_the_error_of_a_failed_search(hostile_store):
    def build(store, args):
        raise WorkbenchError(f"generator said {PAYLOAD}")

    runner = SearchRunner(hostile_store, build=build)
    view = SearchView(hostile_store, runner)
    runner.start(hostile_store.problems()[0].id, "replay:h100", "measure_all", "none", budget=2)
    runner.join(timeout=60)
    view.refresh(force=True)
    assert runner.phase == "failed" and "search failed" in view.status.object
    assert ESCAPED in view.status.object
    _assert_inert(view.status.object)


def test_calibration_note_and_banner_escape_stored_names(hostile_store, monkeypatch):
    from workbench import app

    p = hostile_store.problems()[0]
    hostile_store.put_measurements([Measurement(
        candidate_id=HOSTILE_ID, problem_id=p.id, hardware_key=PAYLOAD, status=Status.OK, speedup=1.0,
        reference_ms=1.0, candidate_ms=1.0)])
    hostile_store.put_forecasts([Forecast(forecaster=PAYLOAD, candidate_id=HOSTILE_ID, problem_id=p.id,
                                          hardware_key="h100", probabilities=(0.125,) * 8)])
    page = CalibrationPage(hostile_store)
    page.gpu.value = "h100"
    page.refresh(force=True)
    page.forecaster.value = PAYLOAD
    assert ESCAPED in page.note.object
    _assert_inert(page.note.object)
    monkeypatch.setattr(app, "gpu_available", lambda: False)
    banner = app.banner_text(hostile_store)
    assert "REPLAY MODE" in banner and html.escape(PAYLOAD.upper(), quote=True) in banner
    _assert_inert(banner)
