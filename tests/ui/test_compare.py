"""The Compare tab's logic (no browser): methods at an equal budget on a stored landscape and on
a recording, scored against the global best, in a scratch database that the app's never sees."""
from __future__ import annotations

import math

import pytest

from workbench.errors import ConfigError
from workbench.problems import list_problems
from workbench.store import Store
from workbench.ui.compare import (DEFAULT_METHODS, CompareRequest, CompareRunner, Comparer, _per_measurement,
                                  landscape_dirs, landscape_problems)
from workbench.ui.compare_view import CompareView, results_html

LANDSCAPE_PROBLEM = "L1/12_layer_norm"
needs_landscape = pytest.mark.skipif("h200" not in landscape_dirs() or LANDSCAPE_PROBLEM not in
                                     landscape_problems().get("h200", {}), reason="no H200 landscape stored")


@pytest.fixture
def stores(tmp_path):
    app = Store(tmp_path / "app.sqlite")
    app.put_problems(list_problems())
    return app, Store(tmp_path / "scratch.sqlite")


@needs_landscape
def test_methods_compared_on_a_landscape_against_its_global_best(stores):
    app, scratch = stores
    before = app.counts()
    req = CompareRequest(LANDSCAPE_PROBLEM, "replay:h200", 16,
                         DEFAULT_METHODS + ("random_order", "selective"), forecaster="roofline")
    c = Comparer(app, scratch).run(req)
    assert c.source == "landscape" and c.space_size > 100 and c.gpu == "h200"
    speeds = [m.speedup for m in scratch.measurements(problem_id=LANDSCAPE_PROBLEM) if m.ok]
    assert c.global_best == pytest.approx(max(speeds)) and c.reference_best == c.global_best
    assert [cv.method for cv in c.curves] == list(req.methods)
    for cv in c.curves:
        assert cv.spent <= 16 and (cv.best is None or cv.best <= c.global_best + 1e-12)
        assert all(b > a for (_, a), (_, b) in zip(cv.points, cv.points[1:]))  # improvements only
        if cv.to_reference is not None:
            assert cv.saved(16) == 16 - cv.to_reference and cv.best >= c.global_best * 0.98 * (1 - 1e-9)
    by = {cv.method: cv for cv in c.curves}
    assert by["screen_topk"].considered > by["measure_all"].considered  # m*k children considered per parent
    assert by["ranked_order"].considered == 16 and not by["ranked_order"].search_id
    assert app.counts() == before  # nothing written to the app's database
    html = results_html(c)
    assert "global best" in html and html.count("wb-compare-row") == len(req.methods)


def test_a_recording_is_compared_and_a_problem_without_one_is_refused(stores):
    from workbench.dataset import load_shipped

    app, scratch = stores
    rs = load_shipped()
    pid = "L1/01_softmax"
    app.put_candidates([c for c in rs.candidates if c.problem_id == pid])
    app.put_measurements([m for m in rs.measurements if m.problem_id == pid and m.hardware_key == "h100"])
    n = len(app.measurements())
    c = Comparer(app, scratch).run(CompareRequest(pid, "replay:h100", 6, ("measure_all", "screen_topk[random]",
                                                                         "random_order"), forecaster="roofline"))
    assert c.source == "recording" and c.space_size == n
    best = max(m.speedup for m in app.measurements() if m.ok)
    assert c.global_best == pytest.approx(best) and len(app.measurements()) == n
    with pytest.raises(ConfigError, match="no landscape and no recorded measurements"):
        Comparer(app, scratch).run(CompareRequest("L1/02_relu", "replay:h100", 6, ("measure_all",)))


def test_a_request_is_checked():
    with pytest.raises(ConfigError, match="pick methods"):
        CompareRequest("p", "replay:h200", 8, ())
    with pytest.raises(ConfigError, match="unknown"):
        CompareRequest("p", "replay:h200", 8, ("measure_al",))
    with pytest.raises(ConfigError, match="forecaster"):
        CompareRequest("p", "replay:h200", 8, forecaster="llm")


def test_the_best_so_far_after_every_measurement():
    assert _per_measurement([(2, 1.5), (4, 2.0)], 5)[1:] == [1.5, 1.5, 2.0, 2.0]
    assert math.isnan(_per_measurement([(2, 1.5)], 3)[0])


@needs_landscape
def test_the_view_runs_a_comparison_and_cancel_acts_at_once(stores):
    import time

    app, scratch = stores
    view = CompareView(app, scratch=scratch)
    assert any(LANDSCAPE_PROBLEM in label and "landscape on H200" in label for label in view.problem.options)
    view.problem.value, view.gpu.value, view.forecaster.value, view.budget.value = (
        LANDSCAPE_PROBLEM, "replay:h200", "roofline", "2.5")
    view.run()
    assert "not a whole number" in view.status.object and view.runner.phase == "idle"
    view.budget.value = "8"
    view.run()
    view.runner.join(timeout=300)
    view.refresh(force=True)
    assert view.runner.phase == "done", view.runner.error
    shown = [line for line in view._lines if line.visible]
    assert len(shown) == len(DEFAULT_METHODS) and view._best_line.visible
    assert [it.label.value for it in view.fig.legend.items if it.visible][:len(DEFAULT_METHODS)] == list(
        DEFAULT_METHODS)
    runner = CompareRunner(app, scratch)
    runner.start(CompareRequest(LANDSCAPE_PROBLEM, "replay:h200", 64, forecaster="learned"))
    time.sleep(1.0)
    t0 = time.monotonic()
    runner.cancel()
    runner.join(timeout=10)
    assert runner.phase == "cancelled" and time.monotonic() - t0 < 5.0


@needs_landscape
def test_a_second_comparison_reuses_the_forecaster_until_the_database_changes(stores):
    app, scratch = stores
    made: dict = {}
    req = CompareRequest(LANDSCAPE_PROBLEM, "replay:h200", 4, ("measure_all", "ranked_order"), forecaster="roofline")
    Comparer(app, scratch, made=made).run(req)
    first = dict(made)
    Comparer(app, scratch, made=made).run(req)
    assert made == first and len(made) == 1
    app.put_problems(list_problems()[:1])  # any write moves the version: made again
    Comparer(app, scratch, made=made).run(req)
    assert len(made) == 2
