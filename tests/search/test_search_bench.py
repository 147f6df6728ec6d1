"""benchmarks/search_bench.py on synthetic pools (never written to benchmarks/results)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from conftest import ConfidencePolicy, NoisyOracleForecaster, synthetic_pool
from workbench.dataset.sources import RecordSet

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "search_bench.py"
spec = importlib.util.spec_from_file_location("search_bench", _PATH)
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def _records(n_problems=3):
    rs = RecordSet()
    for i in range(n_problems):
        p, c, m = synthetic_pool(f"L1/8{i}_synth", n=50, seed=10 + i)
        rs.problems.append(p)
        rs.candidates += c
        rs.measurements += m
    return rs


def test_benchmark_on_synthetic_pool_respects_budget_and_reports_all_metrics():
    rs = _records()
    results = bench.run_benchmark(rs, "h100", budget=10, seeds=[0, 1],
                                  forecaster_factory=lambda r, pid: NoisyOracleForecaster(r.measurements),
                                  k=2, m=3, method_kw={"selective": {"policy": ConfidencePolicy(0.6)},
                                                       "uncertainty_aware": {"policy": ConfidencePolicy(0.6)}})
    assert len(results) == 3 * 4 * 2
    assert all(r["gpu_measurements"] <= 10 for r in results)
    met = bench.metrics(results)
    assert set(met) == set(bench.METHODS)
    base = met["measure_all"]
    assert base["win_or_tie_rate_equal_budget"] == 1.0  # ties with itself
    assert base["budget_fraction_to_match_median"] is not None and 0 < base["budget_fraction_to_match_median"] <= 1
    for m in met.values():
        assert m["runs"] == 6 and m["gpu_measurements_max"] <= 10
        assert m["final_best_speedup_median"] > 0
    assert met["screen_topk"]["candidates_considered_mean"] > base["candidates_considered_mean"]


def test_metrics_on_hand_made_results():
    def r(method, seed, best, curve, pid="P"):
        return {"problem_id": pid, "method": method, "seed": seed, "budget": 10, "best_speedup": best,
                "gpu_measurements": 10, "considered": 10, "curve": curve}
    results = [r("measure_all", 0, 2.0, [(5, 2.0)]), r("measure_all", 1, 1.0, [(8, 1.0)]),
               r("screen_topk", 0, 2.0, [(2, 1.6)]), r("screen_topk", 1, 1.5, [(3, 1.2), (6, 1.5)])]
    met = bench.metrics(results)
    # target = median(2.0, 1.0) = 1.5: baseline hits at 5 (seed 0) and never (seed 1)
    assert met["measure_all"]["budget_fraction_to_match_median"] is None  # median of (0.5, never)
    assert met["screen_topk"]["budget_fraction_to_match_median"] == pytest.approx((0.2 + 0.6) / 2)
    assert met["screen_topk"]["win_or_tie_rate_equal_budget"] == 1.0
    assert met["screen_topk"]["final_best_speedup_median"] == pytest.approx(1.75)
    assert met["measure_all"]["match_rate"] == 0.5


def test_main_refuses_too_little_data(tmp_path):
    from workbench.dataset.shipped import write_shipped

    write_shipped(_records(2), tmp_path / "shipped")
    out = tmp_path / "out.json"
    assert bench.main(["--data", str(tmp_path / "shipped"), "--budget", "10", "--out", str(out)]) == 1
    assert not out.exists()


def test_live_mode_on_cpu_writes_only_to_out_dir_with_exact_budgets(tmp_path):
    """--live on the CPU interpreter: two methods, one problem, budget 3; measurements are real
    (interpreter timings), so only the structure and the budget accounting are checked."""
    out = tmp_path / "live"
    results = _PATH.parent / "results"
    before = {p.name: p.stat().st_mtime_ns for p in results.glob("*.json")}
    rc = bench.main(["--live", "--gpu", "cpu", "--problems", "L1/01_softmax", "--seeds", "1", "--budget", "3",
                     "--max-seeds", "1", "--k", "2", "--m", "2", "--methods", "measure_all,screen_topk",
                     "--forecaster", "roofline", "--out", str(out)])
    assert rc == 0
    assert {p.name: p.stat().st_mtime_ns for p in results.glob("*.json")} == before  # CPU never writes there
    doc = json.loads((out / "search-cpu.json").read_text())
    assert doc["gpu"] == "cpu" and set(doc["metrics"]) == {"live", "live_strict"}
    live, det = doc["metrics"]["live"], doc["live"]
    assert set(live) == {"measure_all", "screen_topk"}
    for m in live.values():
        assert {"budget_fraction_to_match_median", "win_or_tie_rate_equal_budget",
                "final_best_speedup_median"} <= set(m)
        assert m["runs"] == 1
    assert live["measure_all"]["win_or_tie_rate_equal_budget"] == 1.0
    assert det["problems"] == ["L1/01_softmax"] and det["budget"] == 3 and det["skipped"] == []
    assert det["hardware"]["key"] == "cpu" and det["completed"] == 2
    assert len(det["runs"]) == 2
    for r in det["runs"]:
        ran_dry = r["finish_reason"].startswith(bench.RAN_DRY)
        assert r["gpu_measurements"] == 3 or (ran_dry and r["gpu_measurements"] < 3)
        assert r["budget_exact"] is True and r["wall_s"] > 0
        assert all(used <= r["gpu_measurements"] for used, _ in r["curve"])
    assert det["gpu_measurements_used"] == sum(r["gpu_measurements"] for r in det["runs"])
    # screen_topk considered more candidates than it measured (m * k children per step)
    st = next(r for r in det["runs"] if r["method"] == "screen_topk")
    assert st["considered"] > st["gpu_measurements"]


def test_budget_exact_and_live_metrics_use_complete_problem_seed_pairs():
    def r(method, used, reason, pid="P", seed=0, best=1.0):
        return {"problem_id": pid, "method": method, "seed": seed, "budget": 4, "gpu_measurements": used,
                "finish_reason": reason, "best_speedup": best, "considered": used, "curve": [(1, best)]}
    assert bench.budget_exact(r("measure_all", 4, "budget spent"))
    assert bench.budget_exact(r("measure_all", 2, "exhausted: the generator proposes no new candidates"))
    assert not bench.budget_exact(r("measure_all", 2, "budget spent"))
    assert not bench.budget_exact(r("measure_all", 5, "budget spent"))
    runs = [r("measure_all", 4, "budget spent"), r("screen_topk", 4, "budget spent", best=2.0),
            r("measure_all", 4, "budget spent", pid="Q")]  # Q: screen_topk skipped by the time guard
    met = bench.live_metrics(runs, ["measure_all", "screen_topk"])
    assert met["measure_all"]["runs"] == 1 and met["screen_topk"]["runs"] == 1
    assert met["screen_topk"]["final_best_speedup_median"] == 2.0
