"""Pipelined search (`SearchRun(pipeline=N)`): no step barrier, the executor kept holding N
candidates, the budget exact, deterministic with the replay executor, resumable mid-pipeline
with nothing measured twice.

The stand-in executors answer with the recorded measurements of the synthetic pool; the timed
one measures on `workers` threads and sleeps per candidate (a fixed, per-candidate time), and
logs how many candidates it holds over time."""
from __future__ import annotations

import hashlib
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from conftest import NoisyOracleForecaster
from test_loop import _Crash, _CrashingStore, _method
from workbench.errors import ConfigError
from workbench.execution.executors import CacheExecutor
from workbench.search import METHODS, Archive, ReplayGenerator, SearchRun
from workbench.search.events import decode_all
from workbench.search.pipeline import in_flight_setting, parse_in_flight
from workbench.store import Store
from conftest import synthetic_db  # tests/search/conftest.py (imported at collection, as test_cli does)


class Counting(CacheExecutor):
    """The replay executor, counting how often each candidate is handed over."""

    def __init__(self, measurements):
        super().__init__(measurements, "h100")
        self.submitted: list[str] = []

    def submit(self, problem, candidates):
        self.submitted += [c.id for c in candidates]
        return super().submit(problem, candidates)


class TimedPool(Counting):
    """Measures on `workers` threads, `seconds(candidate id)` each; logs (time, candidates held)
    at every change. Ids in `hang` are never answered (a kernel that hangs its worker)."""

    def __init__(self, measurements, workers=4, seconds=lambda cid: 0.03, hang=()):
        super().__init__(measurements)
        self.workers, self.seconds, self.hang = workers, seconds, set(hang)
        self._pool = ThreadPoolExecutor(workers)
        self._lock = threading.Lock()
        self.held = 0
        self.log: list[tuple[float, int]] = []

    @property
    def capacity(self):
        return self.workers

    def _change(self, d):
        with self._lock:
            self.held += d
            self.log.append((time.perf_counter(), self.held))

    def submit(self, problem, candidates):
        answers = super().submit(problem, candidates)
        out = []
        for c, a in zip(candidates, answers):
            self._change(+1)
            if c.id in self.hang:
                out.append(Future())
                continue
            fut = self._pool.submit(self._measure, a.result())
            fut.add_done_callback(lambda f: self._change(-1))
            out.append(fut)
        return out

    def _measure(self, m):
        time.sleep(self.seconds(m.candidate_id))
        return m

    def close(self):
        self._pool.shutdown(wait=True)


def _jitter(cid: str) -> float:
    """0.02-0.08 s, fixed per candidate: results come back out of submission order."""
    return 0.02 + 0.06 * int(hashlib.sha256(cid.encode()).hexdigest()[:4], 16) / 65536


def _run(store, pool, method="screen_topk", budget=12, seed=0, ex=None, pipeline=4, **kw):
    problem, cands, ms = pool
    ex = ex or Counting(ms)
    return SearchRun(store, problem, ex, ReplayGenerator(cands, ex.candidate_ids), NoisyOracleForecaster(ms),
                     _method(method), budget=budget, seed=seed, pipeline=pipeline, **kw)


def _measured(events):
    return [e["payload"]["measurement"]["candidate_id"] for e in events if e["kind"] == "measured"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("budget", [1, 5, 13])
def test_budget_is_exact_with_the_replay_executor(store, pool, method, budget):
    run = _run(store, pool, method, budget)
    summary = run.run()
    events = store.events(summary["search_id"])
    measured = _measured(events)
    assert summary["gpu_measurements"] == len(measured) == budget
    assert len(run.executor.submitted) == budget and len(set(measured)) == budget
    assert sum(e["kind"] == "queued" for e in events) == budget
    assert summary["finish_reason"] == "budget spent" and events[-1]["kind"] == "finished"


@pytest.mark.parametrize("method", ["measure_all", "screen_topk", "uncertainty_aware"])
def test_budget_is_exact_when_results_come_back_out_of_order(store, pool, method):
    ex = TimedPool(pool[2], workers=4, seconds=_jitter)
    summary = _run(store, pool, method, budget=14, ex=ex, pipeline=5).run()
    ex.close()
    events = store.events(summary["search_id"])
    measured = _measured(events)
    assert summary["gpu_measurements"] == len(measured) == len(ex.submitted) == 14
    assert len(set(ex.submitted)) == 14
    assert max(h for _, h in ex.log) <= 14
    # Results were recorded in the order they came back, not the order they were queued.
    queued = [e["payload"]["candidate_id"] for e in events if e["kind"] == "queued"]
    assert measured != queued


def _mean_held(log, until):
    """Time-weighted mean of candidates held from the first submission to `until`."""
    total = 0.0
    for (t0, h), (t1, _) in zip(log, log[1:]):
        if t0 >= until:
            break
        total += h * (min(t1, until) - t0)
    return total / (until - log[0][0])


def _held_while_budget_left(store, pool, auto: bool):
    ex = TimedPool(pool[2], workers=4, seconds=lambda cid: 0.05)
    setting = in_flight_setting("auto" if auto else 1, ex)  # auto: the executor's capacity
    summary = _run(store, pool, "screen_topk", budget=24, ex=ex, **setting).run()
    ex.close()
    last_submit = max(t for (t, h), (_, before) in zip(ex.log[1:], ex.log) if h > before)
    return summary, ex, _mean_held(ex.log, last_submit)


def test_the_executor_is_kept_at_its_capacity_while_budget_is_left(tmp_path, pool):
    with Store(tmp_path / "p.sqlite") as sp, Store(tmp_path / "s.sqlite") as ss:
        piped, ex, mean = _held_while_budget_left(sp, pool, auto=True)
        stepped, ex1, mean1 = _held_while_budget_left(ss, pool, auto=False)
        assert sp.get_search(piped["search_id"])["pipeline"] == 4
    assert piped["gpu_measurements"] == stepped["gpu_measurements"] == 24
    assert max(h for _, h in ex.log) >= 4  # capacity 4: the pipeline fills all four workers
    assert mean >= 0.75 * 4, mean       # and keeps them filled until the budget is handed over
    assert mean > mean1 + 1.0, (mean, mean1)  # one parent per step leaves workers idle


def test_a_slow_kernel_holds_only_its_own_slot(tmp_path, store, pool):
    """No step barrier: while one kernel takes long, later parents are expanded and measured."""
    problem, cands, ms = pool
    with Store(tmp_path / "probe.sqlite") as st:
        probe = _run(st, pool, budget=4)
        probe.run()
    slow = probe.executor.submitted[1]  # a seed
    ex = TimedPool(ms, workers=4, seconds=lambda cid: 0.6 if cid == slow else 0.02)
    summary = _run(store, pool, budget=16, ex=ex).run()
    ex.close()
    events = store.events(summary["search_id"])
    kinds = [(e["kind"], e["payload"].get("candidate_id") or e["payload"].get("measurement", {}).get("candidate_id"))
             for e in events]
    queued_at = kinds.index(("queued", slow))
    measured_at = kinds.index(("measured", slow))
    between = [k for k, _ in kinds[queued_at:measured_at]]
    assert between.count("selected") >= 2 and between.count("measured") >= 4


def _decisions(payload):
    """An event payload without what differs between two identical runs (clock, search id)."""
    if isinstance(payload, dict):
        return {k: _decisions(v) for k, v in payload.items() if k not in ("created_at", "search_id")}
    return payload


def test_same_settings_same_events_with_the_replay_executor(tmp_path, pool):
    runs = []
    for i in range(2):
        with Store(tmp_path / f"{i}.sqlite") as st:
            run = _run(st, pool, "selective", budget=15, seed=5)
            run.run()
            events = st.events(run.search_id)
            runs.append((run.archive.signature(), [(e["kind"], _decisions(e["payload"])) for e in events]))
            assert Archive.from_events(decode_all(events)).signature() == run.archive.signature()
    assert runs[0] == runs[1]


@pytest.mark.parametrize("method", ["screen_topk", "selective"])
def test_crash_anywhere_then_resume_ends_with_same_archive(tmp_path, pool, method):
    with Store(tmp_path / "ref.sqlite") as st:
        ref = _run(st, pool, method, budget=12, seed=9)
        ref.run()
        n_events = len(st.events(ref.search_id))
    for at in sorted({3, 8, 17, n_events // 3, n_events // 2, n_events - 20, n_events - 2}):
        path = tmp_path / f"crash{at}.sqlite"
        with Store(path) as st:
            run = _run(_CrashingStore(st, at), pool, method, budget=12, seed=9)
            with pytest.raises(_Crash):
                run.run()
            sid, before = run.search_id, list(run.executor.submitted)
        with Store(path) as st:
            resumed = _run(st, pool, method, budget=12, seed=9, pipeline=2).resume(sid)
            resumed.run()
            events = st.events(sid)
        assert resumed.archive.signature() == ref.archive.signature(), f"crash at event {at}"
        assert Archive.from_events(decode_all(events)).signature() == ref.archive.signature()
        handed = before + resumed.executor.submitted
        assert len(handed) == len(set(handed)) and len(_measured(events)) == 12  # nothing measured twice


@pytest.mark.parametrize("dies_at", ["archived", "children_done"])
def test_resume_mid_pipeline_records_what_was_in_flight_and_measures_nothing_twice(tmp_path, pool, dies_at):
    """The run dies with candidates at the executor (while recording a result, or in the middle
    of expanding a parent): those the executor answered after the crash are recorded from the
    store, the one that hung is recorded crashed; none is handed over again."""
    problem, cands, ms = pool
    with Store(tmp_path / "probe.sqlite") as st:
        probe = _run(st, pool, budget=4)
        probe.run()
    hung = probe.executor.submitted[2]  # a seed, handed over first in every run of these settings
    ex = TimedPool(ms, workers=4, seconds=lambda cid: 4 * _jitter(cid), hang={hung})
    path = tmp_path / "mid.sqlite"
    with Store(path) as st:
        run = _run(st, pool, budget=14, ex=ex)

        def die(event):
            if event.kind == dies_at and run.used >= 6:
                raise _Crash()
        run.on_event = die
        with pytest.raises(_Crash):
            run.run()
        sid = run.search_id
        ex.close()  # what was still measuring finishes (and is stored by the run's callback)
        in_flight = [cid for cid in ex.submitted if cid not in run.measurements]
    assert hung in in_flight and len(in_flight) >= 2
    with Store(path) as st:
        again = Counting(ms)
        resumed = _run(st, pool, budget=14, ex=again).resume(sid)
        assert (resumed._partial.step == resumed.step_index) == (dies_at == "children_done")  # a cut expansion
        summary = resumed.run()
        events = st.events(sid)
    assert not set(again.submitted) & set(ex.submitted)
    measured = {e["payload"]["measurement"]["candidate_id"]: e["payload"]["measurement"] for e in events
                if e["kind"] == "measured"}
    assert summary["gpu_measurements"] == len(measured) == 14
    assert measured[hung]["status"] == "crashed" and "not measured again" in measured[hung]["reason"]
    answered = [cid for cid in in_flight if cid != hung]
    recorded = {m.candidate_id: m for m in ms}
    assert all(measured[cid]["status"] == recorded[cid].status.value for cid in answered)


def test_stop_waits_for_the_candidates_in_flight_then_resumes(store, pool):
    ex = TimedPool(pool[2], workers=4, seconds=_jitter)
    run = _run(store, pool, budget=14, ex=ex)
    run.on_event = lambda e: run.stop() if e.kind == "measured" and run.used == 5 else None
    s = run.run()
    assert not s["finished"] and store.get_search(run.search_id)["state"] == "stopped"
    events = store.events(run.search_id)
    assert sum(e["kind"] == "queued" for e in events) == len(_measured(events)) == run.used > 5
    resumed = _run(store, pool, budget=14, ex=Counting(pool[2])).resume(run.search_id)
    assert resumed.run()["gpu_measurements"] == 14
    ex.close()
    handed = ex.submitted + resumed.executor.submitted
    assert len(handed) == len(set(handed)) == 14


def test_settings_are_checked_and_a_pipeline_resumes_as_a_pipeline(store, pool):
    with pytest.raises(ConfigError, match="pipeline"):
        _run(store, pool, pipeline=4, in_flight=2)
    with pytest.raises(ConfigError, match="pipeline"):
        _run(store, pool, pipeline=-1)
    run = _run(store, pool, budget=8)
    run.run(max_steps=2)
    assert not run._flight and run.used < 8  # run() returns with nothing in flight
    with pytest.raises(ConfigError, match="pipeline"):
        _run(store, pool, budget=8, pipeline=0).resume(run.search_id)
    assert _run(store, pool, budget=8, pipeline=7).resume(run.search_id).run()["gpu_measurements"] == 8


def test_in_flight_settings():
    class Ex:
        capacity = 12
    assert in_flight_setting(2, Ex()) == {"in_flight": 2, "pipeline": 0}
    assert in_flight_setting("auto", Ex()) == {"in_flight": 1, "pipeline": 12}
    assert in_flight_setting("auto:5", Ex()) == {"in_flight": 1, "pipeline": 5}
    assert in_flight_setting("auto", object()) == {"in_flight": 1, "pipeline": 1}
    assert parse_in_flight("3") == 3
    for bad in ("0", "-1", "auto:0", "many", "auto:x"):
        with pytest.raises(ConfigError, match="auto"):
            parse_in_flight(bad)


def test_cli_in_flight_auto_runs_a_pipelined_search(tmp_path, capsys):
    from workbench.cli import main

    db = synthetic_db(tmp_path)
    common = ["--db", str(db), "search", "--problem", "L1/90_synth_a", "--gpu", "replay:h100", "--method",
              "screen_topk", "--budget", "7", "--forecaster", "roofline", "--no-progress", "--k", "2", "--m", "2"]
    assert main(common + ["--in-flight", "auto:3"]) == 0
    assert "GPU measurements used:   7 / 7" in capsys.readouterr().out
    with Store(db) as st:
        (info,) = st.searches()
    assert info["pipeline"] == 3 and info["in_flight"] == 1
    with pytest.raises(SystemExit):
        main(common + ["--in-flight", "lots"])
    assert "auto" in capsys.readouterr().err


def test_executor_capacity_is_its_workers(pool):
    from workbench.execution.executors import ChunkedExecutor, CPUExecutor
    from workbench.execution.hardware import cpu_hardware

    assert CacheExecutor(pool[2], "h100").capacity == 1
    with CPUExecutor(workers=3) as cpu:
        assert cpu.capacity == 3
    with ChunkedExecutor(cpu_hardware(), device="cpu", workers=5) as chunked:
        assert chunked.capacity == 5
        assert in_flight_setting("auto", chunked) == {"in_flight": 1, "pipeline": 5}
