"""The app's views driven from Python (no browser): replay search, pause/stop, shared runner,
threshold slider, held-out forecasts, inspector, empty database.

The replay tests use the real measurements shipped in kernels_cache/shipped/ (skipped when
absent); the empty-database tests need nothing.
"""
from __future__ import annotations

import threading
import time

import panel as pn
import pytest

from workbench.dataset import DEFAULT_SHIPPED_DIR, load_into_store
from workbench.errors import ConfigError
from workbench.problems import list_problems
from workbench.spec import SearchSpec
from workbench.store import Store
from workbench.ui.calibration_page import HELD_OUT, CalibrationPage, forecaster_names
from workbench.ui.calibration_view import CalibrationView, calibration_info
from workbench.ui.dataset_view import DatasetView
from workbench.ui.inspector import CandidateInspector
from workbench.ui.runner import BackgroundJobs, RunnerBusyError, SearchRunner, shared
from workbench.ui.search_view import NO_DATA, SearchView, gpu_options, problem_options

needs_shipped = pytest.mark.skipif(not (DEFAULT_SHIPPED_DIR / "kernels.parquet").exists(),
                                   reason="shipped measurements missing")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    if not (DEFAULT_SHIPPED_DIR / "kernels.parquet").exists():
        pytest.skip("shipped measurements missing")
    s = Store(tmp_path_factory.mktemp("app") / "db.sqlite")
    s.put_problems(list_problems())
    load_into_store(DEFAULT_SHIPPED_DIR, s)
    return s


@pytest.fixture
def empty_store(tmp_path):
    s = Store(tmp_path / "empty.sqlite")
    s.put_problems(list_problems())
    return s


def _wait(pred, timeout=180.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.1)
    return False


def test_replay_gpus_are_offered(store):
    opts = gpu_options(store)
    assert "replay:h100" in opts.values() and "replay:h200" in opts.values()
    assert all(label.startswith("REPLAY") for label, v in opts.items() if v.startswith("replay:"))


def test_problem_labels_carry_level_and_tags(store):
    opts = problem_options(store)
    softmax = [label for label, pid in opts.items() if pid == "L1/01_softmax"]
    assert len(softmax) == 1 and "level 1" in softmax[0]
    assert all(t in softmax[0] for t in store.get_problem("L1/01_softmax").tags)


def test_replay_search_fills_the_table_and_the_inspector(store):
    runner = SearchRunner(store)
    view = SearchView(store, runner)
    view.problem.value = "L1/01_softmax"
    view.gpu.value = "replay:h100"
    view.forecaster.value = "roofline"
    view.budget.value = "6"
    view._start()
    runner.join(timeout=120)
    assert runner.phase == "finished" and not runner.error
    view.refresh(force=True)
    table = view.table.value
    measured = table[table["decision"] == "measured"]
    assert len(measured) == 6  # the budget counts GPU measurements exactly
    assert len(table) >= 6 and "REPLAY" in view.status.object and "finished" in view.status.object
    assert len(view._curve.data["x"]) >= 1
    # A second tab (another view over the same runner) shows the same run.
    other = SearchView(store, runner)
    other.refresh(force=True)
    assert list(other.table.value["candidate"]) == list(table["candidate"])
    cid = measured.iloc[-1]["candidate"]
    view._on_click(type("E", (), {"row": int(measured.index[-1])})())
    assert view.selected_candidate == cid and view.selected_gpu == "h100"
    insp = CandidateInspector(store, hardware_key="h100", candidate_id=cid)
    assert cid in insp.title.object
    assert "wb-diff" in insp.diff.object
    assert insp.details.object.startswith("<b>status</b>")
    assert "<b>Forecaster</b> <code>roofline</code>" in insp.reasoning.object


class _SlowChildren:
    """The run's generator, each parent's children after `delay_s` seconds: a search that cannot
    finish before the test's pause arrives, however fast the machine."""

    def __init__(self, inner, delay_s: float = 0.3):
        self.inner, self.delay_s, self.name = inner, delay_s, inner.name

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def children(self, ctx):
        time.sleep(self.delay_s)
        return self.inner.children(ctx)


def _slow_build(store, spec):
    from workbench import compose

    run = compose.build(spec, store)
    run.generator = _SlowChildren(run.generator)
    return run


def test_pause_resume_and_stop(store):
    runner = SearchRunner(store, build=_slow_build)
    runner.start("L1/01_softmax", "replay:h100", "measure_all", "none", budget=40, k=2, m=1)
    with pytest.raises(RunnerBusyError):
        runner.start("L1/01_softmax", "replay:h100", "measure_all", "none", budget=4)
    assert _wait(lambda: runner.search_id is not None)
    runner.pause()
    runner.join(timeout=120)
    assert runner.phase == "paused", runner.error
    used = sum(e["kind"] == "measured" for e in store.events(runner.search_id))
    assert used < 40
    runner.resume()
    assert _wait(lambda: sum(e["kind"] == "measured" for e in store.events(runner.search_id)) > used)
    runner.stop()
    runner.join(timeout=120)
    assert runner.phase in ("stopped", "finished")
    runner.resume()  # a stopped run does not restart
    assert not runner.running


def test_pause_while_preparing_stops_at_once(store):
    """There is no search to pause before it is built: pause ends the preparation (a fit in
    progress is cancelled) and says so, instead of waiting for it."""
    release = threading.Event()
    runner = SearchRunner(store, build=lambda st, spec: release.wait(60))
    runner.start("L1/01_softmax", "replay:h100", "measure_all", "none", budget=4)
    t0 = time.monotonic()
    runner.pause()
    runner.join(timeout=10)
    assert runner.phase == "stopped" and time.monotonic() - t0 < 5 and runner.search_id is None
    assert "no search was started" in runner.message
    release.set()


def test_bad_choices_are_refused_before_starting(store):
    runner = SearchRunner(store)
    with pytest.raises(ConfigError, match="needs a forecaster"):
        runner.start("L1/01_softmax", "replay:h100", "screen_topk", "none", budget=4)
    with pytest.raises(ConfigError, match="unknown problem"):
        runner.start("no/such", "replay:h100", "measure_all", "none", budget=4)
    view = SearchView(store, runner)
    view.forecaster.value, view.method.value = "none", "selective"
    view._start()
    assert "cannot start" in view.status.object and runner.phase == "idle"


def test_failure_while_preparing_is_reported(store):
    runner = SearchRunner(store)
    runner.start("L1/01_softmax", "replay:nosuchgpu", "measure_all", "none", budget=4)
    runner.join(timeout=60)
    assert runner.phase == "failed" and "nosuchgpu" in runner.error
    view = SearchView(store, runner)
    view.refresh(force=True)
    assert "search failed" in view.status.object


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
    alpha = view._scatter.data["alpha"]
    assert sum(a > 0.5 for a in alpha) == half.trusted  # trusted points drawn opaque
    view.threshold = 1.0
    assert view.summary.coverage <= half.coverage


def test_calibration_page_computes_heldout_forecasts(store, tmp_path):
    # A small database (8 problems of the shipped H100 data) so five folds fit in seconds.
    small = Store(tmp_path / "small.sqlite")
    small.put_problems(store.problems())
    pids = sorted({m.problem_id for m in store.measurements(hardware_key="h100")})[:8]
    ms = [m for m in store.measurements(hardware_key="h100") if m.problem_id in pids]
    small.put_candidates([store.get_candidate(m.candidate_id) for m in ms])
    small.put_measurements(ms)
    page = CalibrationPage(small, BackgroundJobs())
    assert page.gpu.value == "h100" and not page.forecaster.options
    assert "compute held-out" in page.note.object
    page.compute()
    assert "Computing held-out learned forecasts" in page.note.object and page.cancel_btn.visible
    page._jobs.join(page.job_name, timeout=900)
    status, took = page._jobs.status(page.job_name), page._jobs.elapsed_s(page.job_name)
    assert status == "done", (f"held-out forecasts of 8 problems: {status!r} after {took:.0f} s (about 90 s on "
                              "two free cores: a busy machine may need longer)")
    page.refresh(force=True)
    assert "computed in" in page.note.object
    page.refresh(force=True)
    assert forecaster_names(small, "h100")[0] == HELD_OUT and page.forecaster.value == HELD_OUT
    n_ok = sum(m.ok for m in ms)
    assert page.view._info.n == n_ok
    page.view.threshold = 0.0
    assert page.view.summary.coverage == pytest.approx(1.0)


def test_heldout_forecasts_are_cancelled_at_once(store, tmp_path):
    """Cancel kills the child process computing them: the page says so within seconds, and a
    later Compute starts again."""
    page = CalibrationPage(store, BackgroundJobs())
    page.compute()
    time.sleep(3.0)
    t0 = time.monotonic()
    page.cancel()
    assert page._jobs.status(page.job_name) == "cancelled" and "cancelled after" in page.note.object
    page._jobs.join(page.job_name, timeout=10)
    assert time.monotonic() - t0 < 10 and not page.cancel_btn.visible and not page.compute_btn.disabled
    assert not store.forecasts(forecaster=HELD_OUT)


def test_empty_database_says_load_shipped_data(empty_store):
    view = SearchView(empty_store, SearchRunner(empty_store))
    assert view.status.object == NO_DATA and view.start_btn.disabled
    page = CalibrationPage(empty_store)
    assert "No recorded measurements" in page.note.object and page.compute_btn.disabled
    assert "No recorded measurements" in DatasetView(empty_store).summary.object


def test_app_builds_with_replay_banner(store, monkeypatch):
    from workbench import app

    monkeypatch.setattr(app, "gpu_available", lambda: False)
    pn.state.cache.clear()
    tmpl = app.build(store)
    banner = tmpl.main[0].object
    assert "REPLAY MODE" in banner and "H100" in banner and "H200" in banner
    assert shared(store) is shared(store)  # one runner per process and database
    monkeypatch.setenv("WORKBENCH_AUTH", "1")
    refusal = app.build(store).main[0].object  # no server asks for a login here
    assert "WORKBENCH_AUTH is set but the server has no login" in refusal and "REPLAY" not in refusal


def test_pages_register_no_process_wide_busy_indicator(store, monkeypatch):
    """Panel sets every registered busy indicator, of every session, when any session handles an
    event; the app's pages register none, so one session's event never patches another's page."""
    from workbench import app

    monkeypatch.setattr(app, "gpu_available", lambda: False)
    pn.state.cache.clear()
    before = list(pn.state._indicators)
    pages = [app.build(store), app.build(store)]
    assert pn.state._indicators == before
    assert all(p.busy_indicator is None for p in pages)


def test_the_form_builds_a_local_forecaster_spec_and_shows_errors_escaped(store, tmp_path):
    """Picking "local" shows the Local model card; its fields reach the spec (the model and the
    adapter); a missing adapter folder is refused before starting, as an escaped message."""
    model, adapter = tmp_path / "model", tmp_path / "adapter"
    model.mkdir()
    (model / "m.gguf").write_bytes(b"GGUF")
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text("{}")
    runner = SearchRunner(store)
    view = SearchView(store, runner)
    assert not view.local.visible
    view.problem.value, view.gpu.value = "L1/01_softmax", "replay:h100"
    view.forecaster.value = "local"
    assert view.local.visible
    fields = {w.css_classes[0]: w for w in view.local.objects if w.css_classes}
    fields["wb-local-model"].value = str(model)
    fields["wb-local-gguf"].value = "m.gguf"
    fields["wb-local-adapter"].value = str(adapter)
    spec = view.form.spec(view.chosen_problem())
    assert (spec.forecaster.name, spec.forecaster.model, spec.forecaster.gguf_file, spec.forecaster.adapter,
            spec.forecaster.device) == ("local", str(model), "m.gguf", str(adapter), "cpu")
    assert SearchSpec.from_dict(spec.to_dict()) == spec
    hostile = str(tmp_path / "<script>alert(1)</script>")
    fields["wb-local-adapter"].value = hostile
    view._start()
    assert runner.phase == "idle" and "cannot start" in view.status.object
    assert "the adapter directory" in view.status.object and "<script>" not in view.status.object
    assert "&lt;script&gt;" in view.status.object  # shown, escaped
    fields["wb-local-adapter"].value = ""
    fields["wb-local-model"].value = ""
    view._start()
    assert "needs a model" in view.status.object and runner.phase == "idle"
    view.forecaster.value = "roofline"
    assert not view.local.visible and view.form.spec("L1/01_softmax").forecaster.name == "roofline"


def test_the_search_view_reads_the_replay_key_through_target():
    from workbench.ui.search_view import _replay_key

    assert _replay_key("replay:h200") == "h200" and _replay_key(" REPLAY:H100") == "h100"
    assert [_replay_key(g) for g in ("cuda:0", "cpu", "ray", "replay:", "", None)] == [None] * 6


def test_a_click_opens_the_row_of_the_search_the_table_shows(store):
    """The table shows one search; a click opens its candidate on its GPU, even when the runner
    has moved on to another search meanwhile, and a click on a row the browser still showed from
    an older table opens nothing."""
    runner = SearchRunner(store)
    view = SearchView(store, runner)
    view.problem.value, view.gpu.value, view.forecaster.value, view.budget.value = (
        "L1/01_softmax", "replay:h200", "roofline", "3")
    view._start()
    runner.join(timeout=120)
    view.refresh(force=True)
    shown, table = runner.search_id, view.table.value
    runner.config = dict(runner.config, gpu="replay:h100")  # the runner moved on (a new Start)
    runner.search_id = "another"
    cid = str(table.iloc[0]["candidate"])
    view._on_click(type("E", (), {"row": 0, "column": "candidate", "value": cid})())
    assert (view.selected_candidate, view.selected_search, view.selected_gpu) == (cid, shown, "h200")
    view.selected_candidate = ""
    view._on_click(type("E", (), {"row": 0, "column": "candidate", "value": "not-this-row"})())
    assert view.selected_candidate == ""


def test_while_a_search_prepares_the_table_and_chart_are_empty(store):
    release = threading.Event()
    runner = SearchRunner(store)
    view = SearchView(store, runner)
    view.problem.value, view.gpu.value, view.forecaster.value, view.budget.value = (
        "L1/01_softmax", "replay:h100", "roofline", "3")
    view._start()
    runner.join(timeout=120)
    view.refresh(force=True)
    assert len(view.table.value) and len(view._curve.data["x"])
    runner._build = lambda st, spec: release.wait(60)
    view._start()
    view.refresh(force=True)
    assert runner.phase == "preparing" and len(view.table.value) == 0 and len(view._curve.data["x"]) == 0
    runner.stop()
    release.set()
    runner.join(timeout=10)


def test_the_problem_box_reads_the_pick_not_the_fragment_typed_to_find_it(store):
    """Typing `layer` then picking "L1/12_layer_norm · level 1 · ..." once started "layer"."""
    view = SearchView(store, SearchRunner(store))
    label = next(k for k, v in view.problem.options.items() if v == "L1/12_layer_norm")
    view.problem.value_input = "layer"
    view.problem.value = "L1/12_layer_norm"  # the pick (Bokeh leaves value_input at "layer")
    assert view.chosen_problem() == "L1/12_layer_norm"
    view.problem.value_input = "layer"  # picking the same problem again changes no value
    assert view.chosen_problem() == "L1/12_layer_norm"
    view.problem.value_input = label
    assert view.chosen_problem() == "L1/12_layer_norm"
    view.problem.value_input = "01_softmax"  # one problem's label holds it: that one
    assert view.chosen_problem() == "L1/01_softmax"
    for typed, said in (("", "Problem box is empty"), ("   ", "Problem box is empty"),
                        ("no_such_problem", "unknown problem 'no_such_problem'"), ("softmax", "matches")):
        view.problem.value_input = typed
        with pytest.raises(ConfigError, match=said):
            view.chosen_problem()
    view.problem.value = "L1/01_softmax"
    assert view.chosen_problem() == "L1/01_softmax"
