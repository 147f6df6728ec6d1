"""benchmarks/live_bench.py: the live search is pipelined and never measures a batch kernel (fast,
with a stand-in executor), and the --cpu smoke mode writes the agreed shape (slow: the Triton
interpreter measures every kernel)."""
from __future__ import annotations

import argparse
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bench_scripts import load_bench

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    return load_bench("live_bench")


class _Stand_in:
    """Answers every candidate on `workers` threads after a short sleep, with a speedup made up
    from its id (a test double: it measures nothing)."""

    def __init__(self, workers=3):
        from workbench.execution.executors import CacheExecutor
        from workbench.records import Measurement, Status

        self.hardware = CacheExecutor([Measurement("x", "p", "h100", Status.OK, speedup=1.0)], "h100").hardware
        self.capacity = workers
        self._pool = ThreadPoolExecutor(workers)

    def submit(self, problem, candidates):
        from workbench.records import Measurement, Status

        def answer(c):
            time.sleep(0.01)
            return Measurement(c.id, problem.id, "h100", Status.OK, speedup=0.5 + int(c.id[:4], 16) / 65536)
        return [self._pool.submit(answer, c) for c in candidates]

    def close(self):
        self._pool.shutdown()


def test_live_search_is_pipelined_and_never_hands_over_a_batch_kernel(tmp_path):
    bench = _bench()
    from workbench.problems import get_problem

    problem = get_problem("L1/01_softmax")
    zoo, kids = bench.family(problem.id, 6, seed=0)
    banned = {c.id for c in kids}
    assert len(kids) == 6 and not banned & {c.id for c in zoo}
    args = argparse.Namespace(k=2, m=1, seed=0, max_seeds=2)
    ex = _Stand_in(workers=3)
    out = bench.live_search(tmp_path, "live", problem, ex, 10, "auto", args, banned)
    ex.close()
    assert out["measurements"] == 10 and out["mode"] == "pipelined" and out["target_in_flight"] == 3
    assert out["batch_kernels_searched"] == 0
    assert 1 <= out["max_in_flight"] <= 10 and out["mean_in_flight"] > 0
    stepped = bench.live_search(tmp_path, "steps", problem, _Stand_in(), 4, 2, args, banned)
    assert stepped["mode"] == "steps" and stepped["target_in_flight"] == 2 and stepped["measurements"] == 4


def test_held_counts_what_the_executor_holds():
    bench = _bench()
    release = threading.Event()

    class Slow(_Stand_in):
        def submit(self, problem, candidates):
            return [self._pool.submit(release.wait) for _ in candidates]

    from workbench.records import Candidate

    held = bench.Held(Slow(workers=4))
    cands = [Candidate.from_source("L1/01_softmax", f"x = {i}\n") for i in range(3)]
    futures = held.submit(None, cands)
    assert held.log[-1][1] == 3 and held.submitted == [c.id for c in cands]
    release.set()
    for f in futures:
        f.result()
    held.close()
    assert held.log[-1][1] == 0 and held.stats()["max_in_flight"] == 3


@pytest.mark.slow
def test_live_bench_cpu_smoke(tmp_path):
    pytest.importorskip("triton")
    bench = _bench()
    assert bench.main(["--cpu", "--out", str(tmp_path), "--budget", "5", "--batch", "3", "--k", "2",
                       "--m", "2", "--max-seeds", "2", "--compare-in-flight", "auto:3"]) == 0
    data = json.loads((tmp_path / "live-cpu.json").read_text())
    assert data["benchmark"] == "live" and data["gpu"] == "cpu" and data["commit"]
    m = data["metrics"]
    assert m["executor_batch_kernels"] == 3 and m["executor_batch_per_min"] > 0
    assert data["details"]["live_search"]["measurements"] == 5  # the budget, exactly
    assert m["live_search_per_min"] > 0 and m["live_mode"] == "pipelined" and m["live_target_in_flight"] == 2
    assert m["live_search_per_min_in_flight_auto_3"] > 0 and m["batch_kernels_searched"] == 0
    assert m["live_ratio_in_flight_auto_3"] == pytest.approx(
        m["live_search_per_min_in_flight_auto_3"] / m["executor_batch_per_min"], rel=1e-2)
    assert data["details"]["live_search_in_flight_auto_3"]["target_in_flight"] == 3
    assert "3 candidates in flight" in data["definitions"]["live_ratio_in_flight_auto_3"]
    assert m["live_ratio"] == pytest.approx(m["live_search_per_min"] / m["executor_batch_per_min"], rel=1e-2)
    assert data["settings"]["cpu_smoke"] is True
    assert not (ROOT / "benchmarks" / "results" / "live-cpu.json").exists()


@pytest.mark.parametrize("argv, says", [
    (["--cpu", "--out", "X", "--compare-linger", "0.5"], "not with --cpu or --ray"),
    (["--ray", "--compare-linger", "0.5"], "not with --cpu or --ray"),
    (["--compare-linger", "-1"], "seconds in [0, 60]"),
    (["--linger", "61"], "seconds in [0, 60]"),
    (["--ray", "--linger", "1"], "not with --cpu or --ray"),
    (["--linger", "1", "--compare-linger", "1"], "the run's own executor setting"),
    (["--compare-linger", "1"], "the run's own executor setting"),  # the GPU executor's default
])
def test_compare_linger_is_checked_before_anything_runs(argv, says, capsys):
    with pytest.raises(SystemExit) as e:
        _bench().main(argv)
    assert e.value.code == 2 and says in capsys.readouterr().err
