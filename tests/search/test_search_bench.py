"""benchmarks/search_bench.py on synthetic pools (never written to benchmarks/results)."""
from __future__ import annotations

import importlib.util
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
