"""The app's views driven from Python (no browser): replay search, threshold slider, inspector."""
from __future__ import annotations

import time

import pytest

from workbench.dataset import DEFAULT_SHIPPED_DIR, load_into_store
from workbench.problems import list_problems
from workbench.store import Store
from workbench.ui.calibration_view import CalibrationView, calibration_info
from workbench.ui.inspector import CandidateInspector
from workbench.ui.runner import SearchRunner
from workbench.ui.search_view import SearchView, gpu_options

pytestmark = pytest.mark.skipif(not (DEFAULT_SHIPPED_DIR / "kernels.parquet").exists(),
                                reason="shipped measurements missing")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    s = Store(tmp_path_factory.mktemp("app") / "db.sqlite")
    s.put_problems(list_problems())
    load_into_store(DEFAULT_SHIPPED_DIR, s)
    return s


def test_replay_gpus_are_offered(store):
    opts = gpu_options(store)
    assert "replay:h100" in opts.values() and "replay:h200" in opts.values()
    assert all(label.startswith("REPLAY") for label, v in opts.items() if v.startswith("replay:"))


def test_replay_search_fills_the_table_and_the_inspector(store):
    runner = SearchRunner(store)
    view = SearchView(store, runner)
    view.problem.value = "L1/01_softmax"
    view.gpu.value = "replay:h100"
    view.forecaster.value = "roofline"
    view.budget.value = 6
    view._start()
    runner.join(timeout=120)
    assert not runner.running and not runner.error
    view.refresh(force=True)
    table = view.table.value
    measured = table[table["decision"] == "measured"]
    assert len(measured) == 6  # the budget counts GPU measurements exactly
    assert len(table) >= 6 and "budget" not in view.status.object
    assert len(view._curve.data["x"]) >= 1
    cid = measured.iloc[-1]["candidate"]
    insp = CandidateInspector(store, hardware_key="h100", candidate_id=cid)
    assert cid in insp.title.object
    assert "wb-diff" in insp.diff.object
    assert insp.details.object.startswith("**status**")


def test_threshold_slider_moves_coverage_and_risk(store):
    from workbench.forecast.roofline import RooflineForecaster
    from workbench.records import Hardware

    hw = Hardware(key="h100", name="NVIDIA H100 80GB HBM3", sm_count=132)
    ms = [m for m in store.measurements(hardware_key="h100") if m.ok][:200]
    fc = RooflineForecaster()
    fs = [fc.forecast(store.get_problem(m.problem_id), store.get_candidate(m.candidate_id), hw) for m in ms]
    view = CalibrationView(calibration_info(fs, ms))
    view.threshold = 0.0
    full = view.summary
    assert full.coverage == pytest.approx(1.0)
    view.threshold = float(sorted(view._info.confidence)[len(ms) // 2])
    half = view.summary
    assert 0 < half.coverage < 1 and half.trusted + half.deferred == len(ms)
    assert "coverage" in view.stats.object and f"{half.coverage:.3f}" in view.stats.object
    view.threshold = 1.0
    assert view.summary.coverage <= half.coverage
