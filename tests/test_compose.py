"""One spec, three front-ends, one stored spec: a search started from the app's form, from the
CLI's arguments and from a notebook call (`compose.build`) stores the same `spec.to_dict()`;
resuming with a different spec is refused with the differing fields named.

Replay target over a synthetic pool in a temporary SQLite store (CacheExecutor: no CPU or GPU
measurement), roofline forecaster (nothing to fit), a budget of 6."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from workbench import compose
from workbench.cli import main
from workbench.errors import ConfigError
from workbench.spec import SearchSpec
from workbench.store import Store

PROBLEM = "L1/90_synth_a"


def _synthetic_pool():
    path = Path(__file__).parent / "search" / "conftest.py"
    spec = importlib.util.spec_from_file_location("_search_conftest", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.synthetic_pool


@pytest.fixture
def db(tmp_path) -> Path:
    path = tmp_path / "compose.sqlite"
    with Store(path) as st:
        problem, cands, ms = _synthetic_pool()(PROBLEM, n=60, seed=0)
        st.put_problem(problem)
        st.put_candidates(cands)
        st.put_measurements(ms)
    return path


SPEC = SearchSpec(PROBLEM, target="replay:h100", forecaster="roofline", budget=6)


def _search_id(err: str) -> str:
    return err.split("search ", 1)[1].split(":", 1)[0]


def test_app_cli_and_notebook_store_the_same_spec(db, capsys):
    from workbench.ui.runner import SearchRunner
    from workbench.ui.search_view import SearchView

    ids = []
    with Store(db) as store:
        # the app: the form's widgets, as a user sets them
        runner = SearchRunner(store)
        view = SearchView(store, runner)
        view.problem.value, view.gpu.value = PROBLEM, "replay:h100"
        view.forecaster.value, view.budget.value = "roofline", "6"
        view._start()
        runner.join(timeout=120)
        assert runner.phase == "finished", runner.error
        ids.append(runner.search_id)
        # a notebook
        run = compose.build(SPEC, store)
        run.start()
        run.run()
        ids.append(run.search_id)
    # the CLI
    assert main(["--db", str(db), "search", "--problem", PROBLEM, "--gpu", "replay:h100",
                 "--forecaster", "roofline", "--budget", "6", "--no-progress"]) == 0
    ids.append(_search_id(capsys.readouterr().err))
    with Store(db) as store:
        stored = [store.get_search(i)["spec"] for i in ids]
        started = [next(e for e in store.events(i) if e["kind"] == "started")["payload"]["config"]["spec"]
                   for i in ids]
        measured = [sum(e["kind"] == "measured" for e in store.events(i)) for i in ids]
    assert len(set(ids)) == 3
    assert stored == started == [SPEC.to_dict()] * 3
    assert measured == [6, 6, 6]


def test_resume_with_a_different_spec_names_the_difference(db, capsys):
    with Store(db) as store:
        run = compose.build(SPEC, store)
        run.start()
        run.run(max_steps=1)
        sid = run.search_id
        assert not run.finished
        other = SPEC.replace(budget=8, **{"method.k": 2})
        with pytest.raises(ConfigError) as e:
            compose.resume(other, store, sid)
        assert "budget: stored 6, given 8" in str(e.value) and "method.k: stored 4, given 2" in str(e.value)
        assert sum(ev["kind"] == "resumed" for ev in store.events(sid)) == 0  # nothing written
    # the CLI refuses the same way
    assert main(["--db", str(db), "search", "--problem", PROBLEM, "--gpu", "replay:h100", "--forecaster",
                 "roofline", "--budget", "6", "--k", "3", "--no-progress", "--resume", sid]) == 1
    assert "method.k: stored 4, given 3" in capsys.readouterr().err
    # the same spec resumes and finishes
    with Store(db) as store:
        again = compose.resume(SPEC, store, sid)
        summary = again.run()
        assert summary["gpu_measurements"] == 6 and again.finished


def test_a_search_stored_before_specs_resumes_on_its_settings(db):
    """Searches written without a spec are still checked by SearchRun.resume's stored settings."""
    with Store(db) as store:
        run = compose.build(SPEC, store)
        run.spec = None  # as a run composed before specs were stored
        run.start()
        run.run(max_steps=1)
        assert compose.stored_spec(store, run.search_id) is None
        with pytest.raises(ConfigError, match="budget"):
            compose.resume(SPEC.replace(budget=9), store, run.search_id)
        assert compose.resume(SPEC, store, run.search_id).run()["gpu_measurements"] == 6


def test_executors_are_made_from_targets(db):
    from workbench.execution.executors import CacheExecutor, CPUExecutor

    with Store(db) as store:
        assert isinstance(compose.make_executor("replay:h100", store), CacheExecutor)
        with pytest.raises(ConfigError, match="live targets only"):
            compose.make_executor("replay:h100", store, workers=2)
    ex = compose.make_executor("cpu")
    try:
        assert isinstance(ex, CPUExecutor)
    finally:
        ex.close()


def test_a_cuda_target_takes_its_gpu_or_the_gpus_given(monkeypatch):
    from workbench.execution import executors

    made = []
    monkeypatch.setattr(executors, "LocalGPUExecutor", lambda **kw: made.append(kw) or kw)
    compose.make_executor("cuda:3", workers=1)
    compose.make_executor("cuda", gpus=[0, 1], workers=4)
    assert made == [{"gpus": [3], "workers": 1}, {"gpus": [0, 1], "workers": 4}]
