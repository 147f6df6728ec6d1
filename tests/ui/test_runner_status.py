"""The search view's budget is passed on as typed (or refused with a message), and the
runner's stage messages (fitting or loading the forecaster) reach the status line."""
from __future__ import annotations

import threading
import time

import pytest

from workbench.dataset import DEFAULT_SHIPPED_DIR, load_into_store
from workbench.problems import list_problems
from workbench.store import Store
from workbench.ui.runner import SearchRunner
from workbench.ui.search_view import SearchView


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    if not (DEFAULT_SHIPPED_DIR / "kernels.parquet").exists():
        pytest.skip("shipped measurements missing")
    s = Store(tmp_path_factory.mktemp("runner") / "db.sqlite")
    s.put_problems(list_problems())
    load_into_store(DEFAULT_SHIPPED_DIR, s)
    return s


def _view(store, build):
    view = SearchView(store, SearchRunner(store, build=build))
    view.problem.value = "L1/01_softmax"
    view.gpu.value = "replay:h100"
    return view


def test_a_large_budget_is_passed_on_unchanged(store):
    seen = []

    def build(st, spec):  # stands in for compose.build: records the budget, builds nothing
        seen.append(spec.budget)
        raise RuntimeError("stopped by the test after recording the budget")

    view = _view(store, build)
    view.budget.value = "1000"
    view._start()
    view._runner.join(timeout=30)
    assert seen == [1000] and view._runner.config["budget"] == 1000


@pytest.mark.parametrize("typed, said", [("0", "at least 1 GPU measurement"), ("-5", "digits only"),
                                         ("2.5", "not a whole number"), ("1e9", "not a whole number"),
                                         ("", "Budget box is empty"), ("forty", "digits only"),
                                         ("10001", "more than the 10000")])
def test_a_budget_that_is_not_a_whole_number_in_range_is_refused_with_a_message(store, typed, said):
    """2.5 once ran as 25 and 1e9 as 19 (the number box dropped what it could not read)."""
    seen = []
    view = _view(store, lambda st, spec: seen.append(spec))
    view.budget.value = typed
    view._start()
    assert seen == [] and view._runner.phase == "idle"
    assert "cannot start" in view.status.object and said in view.status.object


def test_stage_messages_are_shown_while_preparing(store):
    release = threading.Event()
    runner = SearchRunner(store)

    def build(st, spec):  # stands in for compose.build: reports a stage, then waits
        runner._progress("fitting learned forecaster on 123 rows (H100)...")
        release.wait(30)
        raise RuntimeError("stopped by the test")

    runner._build = build
    view = SearchView(store, runner)
    view.problem.value, view.gpu.value = "L1/01_softmax", "replay:h100"
    view._start()
    deadline = time.monotonic() + 30
    while "123 rows" not in runner.message and time.monotonic() < deadline:
        time.sleep(0.05)
    view.refresh()
    assert "fitting learned forecaster on 123 rows (H100)" in view.status.object
    release.set()
    runner.join(timeout=30)
    assert runner.phase == "failed"


def _slow_build(delay_s: float):
    """compose.build with a forecaster that takes `delay_s` per batch (a local model on a CPU)."""
    from workbench import compose
    from workbench.forecast.roofline import RooflineForecaster

    class Slow(RooflineForecaster):
        def forecast_batch(self, *a, **kw):
            time.sleep(delay_s)
            return super().forecast_batch(*a, **kw)

    return lambda st, spec: compose.build(spec.replace(forecaster="roofline"), st, forecaster=Slow())


def test_stop_acts_at_once_during_a_slow_step_and_says_stopping(store):
    runner = SearchRunner(store, build=_slow_build(60.0))
    runner.start("L1/01_softmax", "replay:h100", "screen_topk", "roofline", budget=8)
    deadline = time.monotonic() + 60
    while runner.search_id is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # inside step 0's forecast, which takes a minute
    assert runner.phase == "running" and runner.stage.startswith("forecasting")
    view = SearchView(store, runner)
    view.refresh(force=True)
    assert "now: forecasting" in view.stage.object
    t0 = time.monotonic()
    runner.stop()
    assert runner.phase in ("stopping", "stopped")
    runner.join(timeout=10)
    assert runner.phase == "stopped" and time.monotonic() - t0 < 5.0
    kinds = [e["kind"] for e in store.events(runner.search_id)]
    assert kinds[-1] == "stopped" and store.get_search(runner.search_id)["state"] == "stopped"


def test_pause_mid_step_then_resume_repairs_the_step_and_finishes(store):
    runner = SearchRunner(store, build=_slow_build(2.0))
    runner.start("L1/01_softmax", "replay:h100", "screen_topk", "roofline", budget=6)
    deadline = time.monotonic() + 60
    while runner.search_id is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    t0 = time.monotonic()
    runner.pause()
    runner.join(timeout=10)
    assert runner.phase == "paused" and time.monotonic() - t0 < 5.0
    runner.resume()
    runner.join(timeout=180)
    assert runner.phase == "finished", runner.error
    events = store.events(runner.search_id)
    measured = [e["payload"]["measurement"]["candidate_id"] for e in events if e["kind"] == "measured"]
    assert len(measured) == 6 and len(set(measured)) == 6  # the budget exactly, nothing measured twice
    assert "resumed" in [e["kind"] for e in events]
