"""benchmarks/live_bench.py --cpu (the smoke mode): one executor batch and one live search over
the same family of candidates on the Triton interpreter, written with the agreed shape."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_live_bench_cpu_smoke(tmp_path):
    pytest.importorskip("triton")
    spec = importlib.util.spec_from_file_location("live_bench", ROOT / "benchmarks" / "live_bench.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--cpu", "--out", str(tmp_path), "--budget", "5", "--batch", "3", "--k", "2",
                       "--m", "2", "--max-seeds", "2", "--in-flight", "2"]) == 0
    data = json.loads((tmp_path / "live-cpu.json").read_text())
    assert data["benchmark"] == "live" and data["gpu"] == "cpu" and data["commit"]
    m = data["metrics"]
    assert m["executor_batch_kernels"] == 3 and m["executor_batch_per_min"] > 0
    assert data["details"]["live_search"]["measurements"] == 5  # the budget, exactly
    assert m["live_search_per_min"] > 0
    assert m["live_ratio"] == pytest.approx(m["live_search_per_min"] / m["executor_batch_per_min"], rel=1e-2)
    assert data["settings"]["cpu_smoke"] is True
    assert not (ROOT / "benchmarks" / "results" / "live-cpu.json").exists()
