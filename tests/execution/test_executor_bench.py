"""benchmarks/executor_bench.py: its metric definitions, and a CPU smoke run of its stages."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.records import Measurement, Status
from bench_scripts import load_bench

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    return load_bench("executor_bench")


def _m(cid, ms, speedup, status=Status.OK):
    return Measurement(candidate_id=cid, problem_id="p", hardware_key="h100", status=status, candidate_ms=ms,
                       reference_ms=ms * speedup, speedup=speedup)


def test_cross_process_diffs_use_pairs_ok_in_both(bench):
    first = [_m("a", 1.0, 2.0), _m("b", 2.0, 1.0), _m("c", 1.0, 1.0, Status.INCORRECT)]
    second = [_m("a", 1.1, 2.0), _m("b", 2.0, 1.02), _m("c", 5.0, 1.0)]
    d = bench.cross_process_diffs(first, second)
    assert d["candidate_ms"] == pytest.approx([100 * 0.1 / 1.05, 0.0])
    assert d["speedup"] == pytest.approx([0.0, 100 * 0.02 / 1.01])


def test_repeat_cv_is_the_spread_of_reported_medians(bench):
    reps = {"a": [{"candidate": {"median_ms": x}, "reference": {"median_ms": 2.0}} for x in (1.0, 1.0, 1.0)],
            "b": [{"candidate": {"median_ms": x}, "reference": {"median_ms": 2 * x}} for x in (0.9, 1.1)],
            "c": [{"candidate": {"median_ms": 1.0}, "reference": {"median_ms": 1.0}}]}  # one repeat: no CV
    cvs = bench.repeat_cvs(reps)
    assert cvs["candidate_ms"] == pytest.approx([0.0, 100 * 0.1414213562 / 1.0])
    assert cvs["speedup"] == pytest.approx([0.0, 0.0])  # b's reference moved with it


def test_cpu_smoke_run_writes_every_metric_with_definitions(bench, tmp_path):
    assert bench.main(["--cpu", "--triton", "2", "--repeat-candidates", "1", "--repeats", "2",
                       "--skip-fixtures", "--out", str(tmp_path)]) == 0
    out = json.loads((tmp_path / "executor-cpu.json").read_text())
    m = out["metrics"]
    assert set(m) == {"triton_per_min_cold", "triton_per_min_warm", "cuda_per_min_cold",
                      "cross_process_diff_pct_median", "timing_cv_pct_median", "cheats_caught", "cheats_total",
                      "honest_flagged", "fault_batch_lost"}
    assert m["triton_per_min_cold"] > 0 and m["triton_per_min_warm"] > 0
    assert out["details"]["triton_status_cold"] == {"ok": 2}, out["details"]["triton_not_ok"]
    assert m["cross_process_diff_pct_median"] is not None and m["cross_process_diff_pct_median"] >= 0
    assert m["timing_cv_pct_median"] is not None and out["details"]["repeat_cv"]["candidates"] == 1
    assert out["details"]["per_run_cv_pct_median"] is not None
    assert set(out["definitions"]) >= {"timing_cv_pct_median", "cross_process_diff_pct_median"}
    assert m["cuda_per_min_cold"] is None and m["fault_batch_lost"] is None  # GPU-only stages
