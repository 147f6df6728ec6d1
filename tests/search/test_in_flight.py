"""Several parents in flight (`SearchRun(in_flight=P)`): generation and forecasting of the next
parent's children overlap the measurement of the previous ones, the budget stays exact, runs stay
deterministic and resume after a crash to the same archive.

The overlap is shown with a stand-in executor that measures one kernel at a time, like one GPU,
and sleeps for each (the answers are the recorded ones of the synthetic pool), and a generator
that sleeps for each parent, like a model call; both log their busy intervals."""
from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from conftest import NoisyOracleForecaster
from test_loop import _Crash, _CrashingStore, _method
from workbench.errors import ConfigError
from workbench.execution.executors import CacheExecutor
from workbench.search import METHODS, ReplayGenerator, SearchRun
from workbench.store import Store


class OneSlowGPU(CacheExecutor):
    """Answers from the recording, one kernel at a time, `seconds` each; logs busy intervals."""

    def __init__(self, measurements, seconds: float):
        super().__init__(measurements, "h100")
        self.seconds, self.busy = seconds, []
        self._pool = ThreadPoolExecutor(1)

    def submit(self, problem, candidates):
        out = []
        for c, answer in zip(candidates, super().submit(problem, candidates)):
            out.append(self._pool.submit(self._measure, answer.result()))
        return out

    def _measure(self, m):
        t0 = time.perf_counter()
        time.sleep(self.seconds)
        self.busy.append((t0, time.perf_counter()))
        return m

    def close(self):
        self._pool.shutdown()


class SlowGenerator(ReplayGenerator):
    """The recorded pool's children, `seconds` per parent (like a model call); logs intervals."""

    def __init__(self, cands, ids, seconds: float):
        super().__init__(cands, ids)
        self.seconds, self.busy = seconds, []

    def children(self, ctx):
        t0 = time.perf_counter()
        time.sleep(self.seconds)
        self.busy.append((t0, time.perf_counter()))
        return super().children(ctx)


def _overlap(a, b) -> float:
    return sum(max(0.0, min(x1, y1) - max(x0, y0)) for x0, x1 in a for y0, y1 in b)


def _timed_run(store, pool, in_flight, budget=12):
    problem, cands, ms = pool
    ex = OneSlowGPU(ms, seconds=0.04)
    gen = SlowGenerator(cands, ex.candidate_ids, seconds=0.08)
    run = SearchRun(store, problem, ex, gen, NoisyOracleForecaster(ms), _method("screen_topk"), budget=budget,
                    seed=1, max_seeds=2, in_flight=in_flight)
    t0 = time.perf_counter()
    summary = run.run()
    wall = time.perf_counter() - t0
    ex.close()
    return summary, wall, ex, gen


def test_generation_overlaps_measurement_and_the_budget_is_exact(tmp_path, pool):
    with Store(tmp_path / "one.sqlite") as s1, Store(tmp_path / "three.sqlite") as s3:
        one, wall1, ex1, gen1 = _timed_run(s1, pool, in_flight=1)
        three, wall3, ex3, gen3 = _timed_run(s3, pool, in_flight=3)
        events3 = s3.events(three["search_id"])
    assert one["gpu_measurements"] == three["gpu_measurements"] == 12
    assert len([e for e in events3 if e["kind"] == "measured"]) == 12
    # One parent at a time: the generator and the GPU never work at once.
    assert _overlap(gen1.busy, ex1.busy) == pytest.approx(0.0, abs=0.005)
    # Three in flight: the generator works while the GPU measures, and the run is shorter than
    # the sum of generation and measurement time.
    assert _overlap(gen3.busy, ex3.busy) > 0.1
    busy3 = sum(b - a for a, b in gen3.busy) + sum(b - a for a, b in ex3.busy)
    assert wall3 < 0.85 * busy3, (wall3, busy3)
    assert wall3 < wall1
    # A step selects several parents: the executor held more than one parent's kernels at once.
    steps = {}
    for e in events3:
        if e["kind"] == "selected" and e["payload"].get("parent_id"):
            steps.setdefault(e["payload"]["step"], []).append(e["payload"]["slot"])
    assert max(len(v) for v in steps.values()) == 3


def _run(store, pool, method, budget, seed=0, in_flight=3):
    problem, cands, ms = pool
    ex = CacheExecutor(ms, "h100")
    return SearchRun(store, problem, ex, ReplayGenerator(cands, ex.candidate_ids), NoisyOracleForecaster(ms),
                     _method(method), budget=budget, seed=seed, in_flight=in_flight)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("budget", [1, 5, 13])
def test_budget_is_exact_with_parents_in_flight(store, pool, method, budget):
    summary = _run(store, pool, method, budget).run()
    events = store.events(summary["search_id"])
    measured = [e["payload"]["measurement"]["candidate_id"] for e in events if e["kind"] == "measured"]
    queued = [e for e in events if e["kind"] == "queued"]
    assert summary["gpu_measurements"] == len(measured) == len(queued) == budget
    assert len(set(measured)) == len(measured)


def test_same_seed_same_archive(tmp_path, pool):
    sigs = []
    for i in range(2):
        with Store(tmp_path / f"{i}.sqlite") as st:
            run = _run(st, pool, "selective", budget=15, seed=5)
            run.run()
            sigs.append(run.archive.signature())
    assert sigs[0] == sigs[1]


@pytest.mark.parametrize("method", ["screen_topk", "selective"])
def test_crash_anywhere_then_resume_ends_with_same_archive(tmp_path, pool, method):
    with Store(tmp_path / "ref.sqlite") as st:
        ref = _run(st, pool, method, budget=12, seed=9)
        ref.run()
        n_events = len(st.events(ref.search_id))
    for at in sorted({4, 9, n_events // 3, n_events // 2, n_events - 2}):
        path = tmp_path / f"crash{at}.sqlite"
        with Store(path) as st:
            run = _run(_CrashingStore(st, at), pool, method, budget=12, seed=9)
            with pytest.raises(_Crash):
                run.run()
            sid = run.search_id
        with Store(path) as st:
            resumed = _run(st, pool, method, budget=12, seed=9).resume(sid)
            resumed.run()
            kinds = [e["kind"] for e in st.events(sid)]
        assert resumed.archive.signature() == ref.archive.signature(), f"crash at event {at}"
        assert kinds.count("measured") == 12


def test_in_flight_is_checked_and_part_of_the_stored_settings(store, pool):
    with pytest.raises(ConfigError, match="in_flight"):
        _run(store, pool, "screen_topk", budget=4, in_flight=0)
    run = _run(store, pool, "screen_topk", budget=6, in_flight=2)
    run.run(max_steps=2)
    with pytest.raises(ConfigError, match="in_flight"):
        _run(store, pool, "screen_topk", budget=6, in_flight=1).resume(run.search_id)
