"""The run loop in replay mode: exact budget accounting, determinism, crash + resume, events."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import ConfidencePolicy, NoisyOracleForecaster, synthetic_pool
from workbench.errors import ConfigError
from workbench.execution.executors import CacheExecutor
from workbench.search import (METHODS, Archive, LLMGenerator, MutationGenerator, ReplayGenerator, SearchRun,
                              ZooGenerator, make_method)
from workbench.search.events import decode_all
from workbench.search.selection import IslandSelector
from workbench.store import Store


def _method(name, **kw):
    if name in ("selective", "uncertainty_aware"):
        kw.setdefault("policy", ConfidencePolicy(0.6))
    if name == "uncertainty_aware":  # the test policy decides trust (its default rule needs held-out data)
        kw.setdefault("trust_rule", "policy")
    return make_method(name, k=2, m=3, **kw)


def _run(store, replay, method, budget=15, seed=0, **kw):
    problem, cands, ms, ex = replay
    return SearchRun(store, problem, ex, ReplayGenerator(cands, ex.candidate_ids), NoisyOracleForecaster(ms),
                     _method(method), budget=budget, seed=seed, **kw)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("budget", [1, 7, 15])
def test_budget_accounting_exact(store, replay, method, budget):
    run = _run(store, replay, method, budget=budget)
    summary = run.run()
    events = store.events(run.search_id)
    measured = [e for e in events if e["kind"] == "measured"]
    queued = [e for e in events if e["kind"] == "queued"]
    assert summary["gpu_measurements"] == len(measured) == len(queued) <= budget
    assert summary["gpu_measurements"] == budget  # the pool is large enough to spend it all
    assert len({e["payload"]["measurement"]["candidate_id"] for e in measured}) == len(measured)
    archived = [e["payload"]["entry"] for e in events if e["kind"] == "archived"]
    assert sum(1 for a in archived if a["kind"] == "measured") == len(measured)
    trusted = [e for e in events if e["kind"] == "trusted"]
    assert summary["trusted"] == len(trusted) == sum(1 for a in archived if a["kind"] == "trusted")
    assert summary["candidates_considered"] == sum(1 for e in events if e["kind"] == "generated")
    assert events[-1]["kind"] == "finished" and store.get_search(run.search_id)["state"] == "finished"


def test_screening_considers_more_candidates_than_baseline(tmp_path, replay):
    with Store(tmp_path / "a.sqlite") as s1, Store(tmp_path / "b.sqlite") as s2:
        base = _run(s1, replay, "measure_all", budget=20).run()
        screen = _run(s2, replay, "screen_topk", budget=20).run()
    assert base["gpu_measurements"] == screen["gpu_measurements"] == 20
    assert screen["candidates_considered"] > base["candidates_considered"]


def test_summary_accuracy_counts_only_forecast_measured_pairs(store, replay):
    s = _run(store, replay, "screen_topk", budget=12).run()
    assert s["forecast_pairs"] > 0 and 0.0 <= s["forecast_bin_accuracy"] <= 1.0
    assert s["forecast_within_one_bin"] >= s["forecast_bin_accuracy"]
    assert s["best_speedup"] == max(m["payload"]["measurement"]["speedup"] or 0
                                    for m in store.events(s["search_id"]) if m["kind"] == "measured")


@pytest.mark.parametrize("method", ["screen_topk", "selective"])
def test_same_seed_same_archive_other_seed_differs(tmp_path, replay, method):
    sigs = []
    for i, seed in enumerate((3, 3, 4)):
        with Store(tmp_path / f"{i}.sqlite") as st:
            run = _run(st, replay, method, budget=15, seed=seed)
            run.run()
            sigs.append(run.archive.signature())
    assert sigs[0] == sigs[1]
    assert sigs[0] != sigs[2]


def test_archive_rebuilt_from_events_matches_live(store, replay):
    run = _run(store, replay, "selective", budget=12, selector=IslandSelector(n_islands=2))
    run.run()
    rebuilt = Archive.from_events(decode_all(store.events(run.search_id)))
    assert rebuilt.signature() == run.archive.signature()


class _Crash(Exception):
    pass


class _CrashingStore:
    """Wraps a Store and dies (like a killed process) just before writing event number `at`."""

    def __init__(self, store, at):
        self._s, self._at, self._n = store, at, 0

    def add_event(self, *a, **kw):
        self._n += 1
        if self._n >= self._at:
            raise _Crash()
        return self._s.add_event(*a, **kw)

    def __getattr__(self, name):
        return getattr(self._s, name)


@pytest.mark.parametrize("method", METHODS)
def test_crash_anywhere_then_resume_ends_with_same_archive(tmp_path, replay, method):
    with Store(tmp_path / "ref.sqlite") as st:
        ref = _run(st, replay, method, budget=12, seed=9)
        ref_summary = ref.run()
        n_events = len(st.events(ref.search_id))
    for at in sorted({3, 5, n_events // 3, n_events // 2, n_events - 2}):
        path = tmp_path / f"crash{at}.sqlite"
        with Store(path) as st:
            run = _run(_CrashingStore(st, at), replay, method, budget=12, seed=9)
            with pytest.raises(_Crash):
                run.run()
            sid = run.search_id
        with Store(path) as st:  # reopen, as after a restart
            resumed = _run(st, replay, method, budget=12, seed=9).resume(sid)
            summary = resumed.run()
            events = st.events(sid)
        assert resumed.archive.signature() == ref.archive.signature(), f"crash at event {at}"
        assert summary["gpu_measurements"] == ref_summary["gpu_measurements"]
        assert summary["best_speedup"] == ref_summary["best_speedup"]
        kinds = [e["kind"] for e in events]
        assert kinds.count("measured") == 12  # nothing measured twice, nothing lost
        assert Archive.from_events(decode_all(events)).signature() == ref.archive.signature()


def test_stop_then_resume(store, replay):
    run = _run(store, replay, "screen_topk", budget=12, seed=2)
    run.on_event = lambda e: run.stop() if e.kind == "measured" and run.used == 5 else None
    s = run.run()
    assert not s["finished"] and store.get_search(run.search_id)["state"] == "stopped"
    resumed = _run(store, replay, "screen_topk", budget=12, seed=2).resume(run.search_id)
    assert resumed.used == run.used
    assert resumed.run()["gpu_measurements"] == 12
    ref = _run(store, replay, "screen_topk", budget=12, seed=2)  # a second, uninterrupted search
    ref.run()
    assert ref.archive.signature() == resumed.archive.signature()


def test_resume_with_other_settings_is_refused(store, replay):
    run = _run(store, replay, "screen_topk", budget=5, seed=1)
    run.run(max_steps=1)
    with pytest.raises(ConfigError, match="different settings"):
        _run(store, replay, "screen_topk", budget=6, seed=1).resume(run.search_id)
    with pytest.raises(ConfigError):
        _run(store, replay, "screen_topk", budget=5, seed=1).resume("nope")


def test_method_without_forecaster_is_refused(store, replay):
    problem, cands, ms, ex = replay
    with pytest.raises(ConfigError, match="forecaster"):
        SearchRun(store, problem, ex, ReplayGenerator(cands), None, make_method("screen_topk"), budget=3)
    s = SearchRun(store, problem, ex, ReplayGenerator(cands), None, make_method("measure_all", k=2), budget=5).run()
    assert s["gpu_measurements"] == 5 and s["forecast_pairs"] == 0


class _ScriptedChat:
    """Test double of ChatClient: answers from a list, cycling."""

    model = "scripted"

    def __init__(self, answers):
        self.answers, self.i = answers, 0

    def chat(self, messages, **kw):
        a = self.answers[self.i % len(self.answers)]
        self.i += 1
        if isinstance(a, Exception):
            raise a

        class R:
            text, prompt_tokens, completion_tokens, seconds = a, 10, 20, 0.1
        return R()


def test_llm_generator_failures_are_events_not_crashes(store, replay):
    problem, cands, ms, ex = replay
    good = "Faster.\n```python\nimport torch\nclass ModelNew(torch.nn.Module):\n    V = {}\n```\n"
    answers = ["no code here", RuntimeError("server down")] + [good.format(i) for i in range(40)]
    # seeds from the pool; LLM children have no recording in the replay, so they are not measured
    gen = LLMGenerator(_ScriptedChat(answers), seed_from=ReplayGenerator(cands, max_seeds=2))
    run = SearchRun(store, problem, ex, gen, None, make_method("measure_all", k=2), budget=6)
    s = run.run()
    events = store.events(run.search_id)
    failed = [e["payload"] for e in events if e["kind"] == "failed_generation"]
    assert len(failed) == 2 and "ModelNew" in failed[0]["reason"] and "server down" in failed[1]["reason"]
    assert failed[0]["raw"] == "no code here"
    assert s["failed_generations"] == 2 and s["gpu_measurements"] == 2  # the two seeds
    assert "cannot measure" in s["finish_reason"]
    llm_kids = [e["payload"]["candidate"] for e in events if e["kind"] == "generated"
                and e["payload"]["candidate"]["origin"].startswith("llm:scripted")]
    assert llm_kids and all(k["parent_id"] for k in llm_kids)


def test_mutation_search_runs_live_on_cpu_executor_shape(store):
    """Mutation + zoo generators through the loop with a replay of measurements made up on the
    spot for whatever the generator proposes (a real executor runs in tests/execution)."""
    from workbench.problems import get_problem
    from workbench.records import Measurement, Status

    problem = get_problem("L1/02_relu")

    from workbench.execution.base import Executor, done_future

    class _HashExecutor(Executor):
        hardware = CacheExecutor([Measurement("x", "p", "h100", Status.OK, speedup=1.0)], "h100").hardware

        def submit(self, problem, cands):
            return [done_future(Measurement(c.id, problem.id, "h100", Status.OK,
                                            speedup=0.5 + int(c.id[:4], 16) / 65536)) for c in cands]

    run = SearchRun(store, problem, _HashExecutor(), MutationGenerator(ZooGenerator()), None,
                    make_method("measure_all", k=3), budget=12, seed=0)
    s = run.run()
    assert s["gpu_measurements"] == 12
    kids = [c for c in run.candidates.values() if c.origin.startswith("mutation:")]
    assert kids and all(run.candidates[k.parent_id] for k in kids)


def test_watch_from_another_process_while_running(tmp_path, replay):
    """A run in a subprocess is killed mid-way; the parent process reads its events, then resumes."""
    db = tmp_path / "live.sqlite"
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from conftest import synthetic_pool, NoisyOracleForecaster
        from workbench.execution.executors import CacheExecutor
        from workbench.search import ReplayGenerator, SearchRun, make_method
        from workbench.store import Store
        problem, cands, ms = synthetic_pool()
        ex = CacheExecutor(ms, "h100")
        class Slow(NoisyOracleForecaster):
            def forecast_batch(self, *a, **kw):
                time.sleep(0.3)
                return super().forecast_batch(*a, **kw)
        st = Store({str(db)!r})
        run = SearchRun(st, problem, ex, ReplayGenerator(cands, ex.candidate_ids),
                        Slow(ms), make_method("screen_topk", k=2, m=3), budget=15, seed=5)
        run.start()
        print(run.search_id, flush=True)
        run.run()
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    sid = proc.stdout.readline().strip()
    with Store(db) as st:
        deadline = time.time() + 60
        while time.time() < deadline and sum(e["kind"] == "measured" for e in st.events(sid)) < 4:
            time.sleep(0.1)
        proc.kill()
        proc.wait()
        seen = st.events(sid)
        assert 4 <= sum(e["kind"] == "measured" for e in seen) < 15
        resumed = _run(st, replay, "screen_topk", budget=15, seed=5).resume(sid)
        resumed.run()
        events = st.events(sid)
    with Store(tmp_path / "ref.sqlite") as st:
        ref = _run(st, replay, "screen_topk", budget=15, seed=5)
        ref.run()
    assert sum(e["kind"] == "measured" for e in events) == 15
    poisoned = [e for e in events if e["kind"] == "measured"
                and "the run ended while this candidate was being measured" in e["payload"]["measurement"]["reason"]]
    if not poisoned:  # killed outside a measurement (almost always: the forecaster is the slow part)
        assert resumed.archive.signature() == ref.archive.signature()


class _DiesMeasuring(CacheExecutor):
    """Replay that takes the whole process down (here: raises) when handed `poison`."""

    def __init__(self, ms, poison):
        super().__init__(ms, "h100")
        self.poison, self.seen = poison, []

    def submit(self, problem, cands):
        self.seen += [c.id for c in cands]
        if self.poison in {c.id for c in cands}:
            raise _Crash()
        return super().submit(problem, cands)


def test_a_candidate_that_killed_the_run_is_recorded_crashed_and_never_run_again(tmp_path, replay):
    problem, cands, ms, ex = replay
    with Store(tmp_path / "ref.sqlite") as st:
        ref = _run(st, replay, "measure_all", budget=8, seed=2)
        ref.run()
        victim = [e["payload"]["measurement"]["candidate_id"] for e in st.events(ref.search_id)
                  if e["kind"] == "measured"][5]
    path = tmp_path / "poison.sqlite"
    with Store(path) as st:
        dying = _DiesMeasuring(ms, victim)
        run = SearchRun(st, problem, dying, ReplayGenerator(cands, ex.candidate_ids), NoisyOracleForecaster(ms),
                        _method("measure_all"), budget=8, seed=2)
        with pytest.raises(_Crash):
            run.run()
        sid = run.search_id
    with Store(path) as st:
        again = _DiesMeasuring(ms, victim)
        resumed = SearchRun(st, problem, again, ReplayGenerator(cands, ex.candidate_ids), NoisyOracleForecaster(ms),
                            _method("measure_all"), budget=8, seed=2).resume(sid)
        resumed.run()  # does not die: the victim is not handed to the executor again
        events = st.events(sid)
        stored = st.get_measurement(victim, "h100")
    assert victim not in again.seen
    m = next(e["payload"]["measurement"] for e in events if e["kind"] == "measured"
             and e["payload"]["measurement"]["candidate_id"] == victim)
    assert m["status"] == "crashed" and "not measured again" in m["reason"]
    assert stored.status.value == "crashed"
    assert sum(e["kind"] == "measured" for e in events) == 8


# ------------------------------------------------ forecasts adapted to the run's own measurements
@pytest.fixture(scope="module")
def learned_replay():
    """A held-out synthetic problem replayed, and a learned forecaster fitted on the others."""
    from workbench.evaluate.synthetic import make_synthetic
    from workbench.forecast.learned import LearnedForecaster

    problems, cands, ms = make_synthetic(n_problems=8, per_problem=40, seed=3)
    problem = problems[3]  # its one root kernel is correct, so the search goes on from it
    own = [m for m in ms if m.problem_id == problem.id and m.hardware_key == "h100"]
    fc = LearnedForecaster(max_iter=20).fit(problems, cands, [m for m in ms if m.problem_id != problem.id])
    ex = CacheExecutor(own, "h100")
    return problem, [c for c in cands if c.problem_id == problem.id], ex, fc


def _learned_run(store, lr, adapt=True, budget=10, seed=4):
    problem, cands, ex, fc = lr
    return SearchRun(store, problem, ex, ReplayGenerator(cands, ex.candidate_ids), fc,
                     make_method("screen_topk", k=2, m=3), budget=budget, seed=seed, adapt_forecasts=adapt)


def _forecasts(events, min_step=0):
    return [(e["payload"]["forecast"]["candidate_id"], e["payload"]["forecast"]["probabilities"],
             e["payload"]["forecast"]["reasoning"]) for e in events
            if e["kind"] == "forecast" and e["payload"]["step"] >= min_step]


def test_forecasts_adapt_to_the_runs_measurements(tmp_path, learned_replay):
    with Store(tmp_path / "a.sqlite") as s1, Store(tmp_path / "b.sqlite") as s2:
        on, off = _learned_run(s1, learned_replay), _learned_run(s2, learned_replay, adapt=False)
        on.run(), off.run()
        f_on, f_off = _forecasts(s1.events(on.search_id)), _forecasts(s2.events(off.search_id))
        assert s1.get_search(on.search_id)["adapt_forecasts"] is True
        assert s2.get_search(off.search_id)["adapt_forecasts"] is False
        later = _forecasts(s1.events(on.search_id), min_step=1)
    # step 0's seeds are forecast before anything is measured; every later forecast is adapted
    assert 0 < len(later) < len(f_on)
    assert all("measured kernel(s) of this problem move the median" in r for _, _, r in later)
    assert not any("measured kernel(s)" in r for _, _, r in f_off)
    # the same candidate forecast by both runs: the adapted forecast differs
    base = {cid: p for cid, p, _ in f_off}
    both = [(p, base[cid]) for cid, p, _ in later if cid in base]
    assert both and any(a != b for a, b in both)


def test_a_measured_reference_forecaster_reads_the_runs_reference_times(tmp_path, learned_replay):
    """With reference_time="measured", the run hands its measurements' reference times to the
    forecaster through `for_run` (the median over the run's measurements at the end), the
    problem's forecasts read it in place of the estimate, and the run's forecaster itself is
    never changed."""
    from workbench.evaluate.synthetic import make_synthetic
    from workbench.forecast.learned import LearnedForecaster

    problem, cands, ex, _ = learned_replay
    problems, all_cands, ms = make_synthetic(n_problems=8, per_problem=40, seed=3)
    fc = LearnedForecaster(max_iter=20, reference_time="measured").fit(
        problems, all_cands, [m for m in ms if m.problem_id != problem.id])
    assert (problem.id, "h100") not in fc.reference_ms_
    before = dict(fc.reference_ms_)
    with Store(tmp_path / "m.sqlite") as st:
        run = SearchRun(st, problem, ex, ReplayGenerator(cands, ex.candidate_ids), fc,
                        make_method("screen_topk", k=2, m=3), budget=10, seed=4, adapt_forecasts=False)
        run.run()
        told_fc = run._forecaster_now()  # what the run knows at its end: every measurement
        measured = [m for m in run.measurements.values() if m.reference_ms]
        later = _forecasts(st.events(run.search_id), min_step=1)
    assert measured and later
    assert fc.reference_ms_ == before and told_fc is not fc  # the run never changes its forecaster
    assert told_fc.reference_ms_[(problem.id, "h100")] == pytest.approx(
        float(np.median([m.reference_ms for m in measured])))
    from workbench.forecast.features import FEATURE_NAMES

    C = {c.id: c for c in cands}
    rows = [(problem, C[cid], run.hardware) for cid, _, _ in later]
    ref = FEATURE_NAMES.index("ref_log10_us")
    told, unknown = told_fc._features(rows), fc._features(rows)
    np.testing.assert_allclose(told[:, ref], np.log10(1 + 1e3 * told_fc.reference_ms_[(problem.id, "h100")]))
    assert not np.allclose(told[:, ref], unknown[:, ref])  # the estimate differs from the measurement


def test_adapted_run_resumes_after_a_crash_with_the_same_forecasts(tmp_path, learned_replay):
    with Store(tmp_path / "ref.sqlite") as st:
        ref = _learned_run(st, learned_replay)
        ref.run()
        ref_f = _forecasts(st.events(ref.search_id))
        n_events = len(st.events(ref.search_id))
    for at in (n_events // 3, (2 * n_events) // 3):
        path = tmp_path / f"crash{at}.sqlite"
        with Store(path) as st:
            run = _learned_run(_CrashingStore(st, at), learned_replay)
            with pytest.raises(_Crash):
                run.run()
            sid = run.search_id
        with Store(path) as st:
            resumed = _learned_run(st, learned_replay).resume(sid)
            resumed.run()
            assert resumed.archive.signature() == ref.archive.signature(), f"crash at event {at}"
            assert _forecasts(st.events(sid)) == ref_f
        with Store(path) as st, pytest.raises(ConfigError, match="adapt_forecasts"):
            _learned_run(st, learned_replay, adapt=False).resume(sid)


def test_default_conformal_policy_calibrates_on_a_long_runs_history(store, replay):
    # budget past min_calibration (16): the default policy (the conformal controller) is built
    # and calibrated on the run's own measured forecasts, and the run spends its whole budget
    problem, cands, ms, ex = replay
    method = make_method("selective", k=2, m=3)
    run = SearchRun(store, problem, ex, ReplayGenerator(cands, ex.candidate_ids), NoisyOracleForecaster(ms),
                    method, budget=30, seed=0)
    summary = run.run()
    assert summary["gpu_measurements"] == 30 and summary["finish_reason"] == "budget spent"
    assert method._calibrated_on >= method.min_calibration and type(method._policy).__name__ == "ConformalRiskController"


class _HeldOutOracle(NoisyOracleForecaster):
    """The test oracle with a held-out set on which its 0.7 forecasts are right, its 0.4 ones wrong."""

    def calibration_set(self):
        import numpy as np

        sure, unsure = np.full(8, 0.3 / 7), np.full(8, 0.6 / 7)
        sure[2], unsure[2] = 0.7, 0.4
        return np.vstack([np.tile(sure, (50, 1)), np.tile(unsure, (50, 1))]), np.r_[[2] * 50, [5] * 50]


def test_the_forecasters_held_out_set_lets_the_policy_trust_from_the_first_step(tmp_path, replay):
    problem, cands, ms, ex = replay
    out = {}
    for name, forecaster in (("plain", NoisyOracleForecaster(ms)), ("held_out", _HeldOutOracle(ms))):
        with Store(tmp_path / f"{name}.sqlite") as s:
            run = SearchRun(s, problem, ex, ReplayGenerator(cands, ex.candidate_ids), forecaster,
                            make_method("selective", k=2, m=3), budget=8, seed=0)
            out[name] = run.run()
            trusted = [e["payload"]["candidate_id"] for e in s.events(run.search_id) if e["kind"] == "trusted"]
            fcs = {e["payload"]["forecast"]["candidate_id"]: e["payload"]["forecast"]
                   for e in s.events(run.search_id) if e["kind"] == "forecast"}
        assert out[name]["gpu_measurements"] == 8
        if name == "plain":  # 8 measured pairs < min_calibration: nothing trusted
            assert trusted == []
        else:  # the confident (0.7) forecasts stand in for measurements, the 0.4 ones never
            assert trusted and all(max(fcs[cid]["probabilities"]) == pytest.approx(0.7) for cid in trusted)
    assert out["held_out"]["candidates_considered"] > out["plain"]["candidates_considered"]


def _small_run(store, pool_size=24, budget=40, seed=3):
    """selective on a pool too small for the budget: the generator runs dry with trusted
    candidates left unmeasured."""
    problem, cands, ms = synthetic_pool(n=pool_size, seed=5, fail_rate=0.0)
    ex = CacheExecutor(ms, "h100")
    return SearchRun(store, problem, ex, ReplayGenerator(cands, ex.candidate_ids), NoisyOracleForecaster(ms),
                     make_method("selective", k=2, m=3, policy=ConfidencePolicy(0.6)), budget=budget, seed=seed,
                     max_idle=3)


@pytest.mark.parametrize("budget", [40, 14])
def test_trusted_candidates_are_measured_when_the_generator_runs_dry(store, budget):
    run = _small_run(store, budget=budget)
    summary = run.run()
    events = store.events(run.search_id)
    trusted = {e["payload"]["candidate_id"] for e in events if e["kind"] == "trusted"}
    deferred_steps = [e["payload"]["step"] for e in events if e["kind"] == "selected" and e["payload"].get("deferred")]
    assert trusted and len(deferred_steps) == 1
    later = [e for e in events if e["payload"]["step"] == deferred_steps[0] and e["kind"] == "measured"]
    measured_ids = [e["payload"]["measurement"]["candidate_id"] for e in later]
    assert measured_ids and set(measured_ids) <= trusted  # the deferred step measures trusted ones only
    # highest expected speedup first
    expected = {e["payload"]["candidate_id"]: e["payload"]["expected_speedup"] for e in events if e["kind"] == "trusted"}
    assert [expected[i] for i in measured_ids] == sorted((expected[i] for i in measured_ids), reverse=True)
    n_measured = sum(1 for e in events if e["kind"] == "measured")
    assert summary["gpu_measurements"] == n_measured <= budget
    still_trusted = [e for e in run.archive if e.kind == "trusted"]
    if budget == 40:  # budget for all: every archived candidate measured, the run ends exhausted
        assert still_trusted == [] and n_measured == len(run.archive) < budget
        assert summary["finish_reason"].startswith("exhausted")
    else:  # the budget ends first: spent exactly, the rest stays trusted
        assert n_measured == budget and summary["finish_reason"] == "budget spent" and still_trusted
    # measured entries replaced the trusted ones in place: one entry per archived candidate, parents kept
    assert len(run.archive) == len({e["payload"]["entry"]["candidate_id"] for e in events if e["kind"] == "archived"})
    by_id = {e["payload"]["entry"]["candidate_id"]: e["payload"]["entry"] for e in events
             if e["kind"] == "archived" and e["payload"]["entry"]["kind"] == "trusted"}
    for cid in measured_ids:
        assert run.archive[cid].kind == "measured" and run.archive[cid].parent_id == by_id[cid]["parent_id"]
    assert Archive.from_events(decode_all(events)).signature() == run.archive.signature()


def test_crash_in_the_deferred_step_then_resume_ends_with_same_archive(tmp_path):
    with Store(tmp_path / "ref.sqlite") as st:
        ref = _small_run(st)
        ref_summary = ref.run()
        events = st.events(ref.search_id)
    first = next(i for i, e in enumerate(events) if e["kind"] == "selected" and e["payload"].get("deferred"))
    for at in (first + 1, first + 3, len(events) - 1):  # event numbers count from 1 (started)
        path = tmp_path / f"crash{at}.sqlite"
        with Store(path) as st:
            run = _small_run(_CrashingStore(st, at))
            with pytest.raises(_Crash):
                run.run()
            sid = run.search_id
        with Store(path) as st:
            resumed = _small_run(st).resume(sid)
            resumed.run()
            got = st.events(sid)
        assert resumed.archive.signature() == ref.archive.signature(), f"crash at event {at}"
        assert sum(1 for e in got if e["kind"] == "measured") == ref_summary["gpu_measurements"]


def test_a_run_starts_with_the_databases_reference_time(tmp_path, learned_replay):
    """Measurements of the problem on the GPU already in the database give the run its
    reference time before its first measurement (the median, kept in the "started" event, so a
    resumed run reads the same one whatever the database has gained since); the step-0
    forecasts read it. Without any, the forecaster forgets a time an earlier run left and reads
    the estimate until the run's first measurement."""
    import dataclasses

    from workbench.evaluate.synthetic import make_synthetic
    from workbench.forecast.features import FEATURE_NAMES
    from workbench.forecast.learned import LearnedForecaster

    problem, cands, ex, _ = learned_replay
    problems, all_cands, ms = make_synthetic(n_problems=8, per_problem=40, seed=3)
    fc = LearnedForecaster(max_iter=20, reference_time="measured", reference_use="feature").fit(
        problems, all_cands, [m for m in ms if m.problem_id != problem.id])
    key = (problem.id, "h100")
    earlier = [dataclasses.replace(m, candidate_id=f"earlier{i}", reference_ms=t)
               for i, (m, t) in enumerate(zip([m for m in ms if m.problem_id == problem.id][:3],
                                              (2.0, 5.0, 3.0)))]
    ref = FEATURE_NAMES.index("ref_log10_us")

    def step0_features(st, run):
        C = {c.id: c for c in cands}
        first = [e["payload"]["forecast"]["candidate_id"] for e in st.events(run.search_id)
                 if e["kind"] == "forecast" and e["payload"]["step"] == 0]
        return first, C

    with Store(tmp_path / "prior.sqlite") as st:
        st.put_measurements(earlier)
        run = SearchRun(st, problem, ex, ReplayGenerator(cands, ex.candidate_ids), fc,
                        make_method("screen_topk", k=2, m=3), budget=6, seed=4, adapt_forecasts=False)
        run.start()
        assert run.prior_reference_ms == pytest.approx(3.0)
        started = next(e for e in st.events(run.search_id) if e["kind"] == "started")
        assert started["payload"]["reference_ms"] == pytest.approx(3.0)
        at_start = run._forecaster_now()
        assert at_start.reference_ms_[key] == pytest.approx(3.0)
        run.step()  # step 0: seeds forecast before anything is measured
        first, C = step0_features(st, run)
        step0 = [e["payload"]["forecast"] for e in st.events(run.search_id)
                 if e["kind"] == "forecast" and e["payload"]["step"] == 0]
        assert first
        # resumed with more in the database: the started event's time, not a new median
        st.put_measurements([dataclasses.replace(earlier[0], candidate_id="later", reference_ms=50.0)])
        again = SearchRun(st, problem, ex, ReplayGenerator(cands, ex.candidate_ids), fc,
                          make_method("screen_topk", k=2, m=3), budget=6, seed=4,
                          adapt_forecasts=False).resume(run.search_id)
        assert again.prior_reference_ms == pytest.approx(3.0)
    told = at_start._features([(problem, C[cid], run.hardware) for cid in first])
    assert np.allclose(told[:, ref], np.log10(1 + 1e3 * 3.0))
    assert not np.allclose(fc._features([(problem, C[cid], run.hardware) for cid in first])[:, ref], told[:, ref])
    by_prior = at_start.forecast_batch([(problem, C[cid]) for cid in first], run.hardware)
    assert [list(f.probabilities) for f in by_prior] == [list(f["probabilities"]) for f in step0]
    assert key not in fc.reference_ms_  # the run never changes its forecaster
    # a forecaster that knows a time for the pair (from elsewhere): a run with no time of its own
    # forgets it and reads the estimate until its first measurement
    knowing = fc.with_reference_times([dataclasses.replace(earlier[0], reference_ms=40.0)])
    with Store(tmp_path / "none.sqlite") as st:  # nothing earlier: the estimate at step 0
        run = SearchRun(st, problem, ex, ReplayGenerator(cands, ex.candidate_ids), knowing,
                        make_method("screen_topk", k=2, m=3), budget=6, seed=4, adapt_forecasts=False)
        run.start()
        assert run.prior_reference_ms is None
        assert key not in run._forecaster_now().reference_ms_
        run.run()
        assert run._forecaster_now().reference_ms_[key] == pytest.approx(
            float(np.median([m.reference_ms for m in run.measurements.values() if m.reference_ms])))
        assert knowing.reference_ms_[key] == 40.0
